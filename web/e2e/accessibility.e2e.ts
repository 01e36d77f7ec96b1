// The page for keyboard and screen-reader users: every control reached with Tab and
// showing where the focus is, drawers that keep the focus while open and give it back,
// names for every button and image, answers read out block by block (not token by
// token), and text colours of at least 4.5:1 in both themes.
// Answers are canned; the server is real.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { CANNED_TIMINGS, cannedAnswers, slowAnswer } from "./canned";
import { answers, ask, PHOTO, pickWithCamera, waitForAnswer } from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();

/** Tabs from the top to the end of the page, noting each focused control and whether it
 * shows an outline. */
async function tabThrough(page: Page): Promise<{ name: string; outlined: boolean }[]> {
  // Tab goes on from the focused element: start above everything else.
  await page.evaluate(() => {
    const top = document.createElement("span");
    top.tabIndex = -1;
    document.body.prepend(top);
    top.focus();
  });
  const seen: { name: string; outlined: boolean }[] = [];
  for (let i = 0; i < 50; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate(() => document.activeElement === document.body)) break;
    seen.push(
      await page.evaluate(() => {
        const node = document.activeElement as HTMLElement;
        const style = getComputedStyle(node);
        // The question box shows its focus as the focus colour on the box around it.
        const probe = document.body.appendChild(document.createElement("i"));
        probe.style.color = "var(--focus)";
        const focusColour = getComputedStyle(probe).color;
        probe.remove();
        const box = node.closest(".composer-box");
        const outlined =
          (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2) ||
          (node.id === "prompt" && box !== null && getComputedStyle(box).borderTopColor === focusColour);
        return { name: node.getAttribute("aria-label") || node.id || node.tagName, outlined };
      }),
    );
  }
  return seen;
}

describe("with the keyboard", () => {
  it("reaches every control of the page, each with a visible focus ring", async () => {
    const page = await suite.openPage();
    const seen = await tabThrough(page);
    const names = seen.map((s) => s.name);
    for (const name of ["Conversations", "New conversation", "Settings", "prompt", "Send"]) {
      expect(names).toContain(name);
    }
    expect(names.some((name) => name.startsWith("Add images"))).toBe(true);
    expect(seen.filter((s) => !s.outlined)).toEqual([]);
  });

  it("keeps the focus on the button that sends, then stops, then on the question box", async () => {
    const page = await suite.openPage();
    await slowAnswer(page, "A short answer, written slowly.", 150);
    await page.locator("#prompt").fill("Hello?");
    await page.locator("#prompt").press("Tab");
    const focused = () =>
      page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.id);
    expect(await focused()).toBe("Send");
    await page.keyboard.press("Enter");
    // The stop button takes the send button's place, and the focus with it: Enter again stops.
    expect(await focused()).toBe("Stop the answer");
    await page.keyboard.press("Enter");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-flag").innerText()).toBe("Stopped");
    expect(await focused()).toBe("prompt");
  });

  for (const [open, close, title] of [
    ["Settings", "Close settings", "Settings"],
    ["Conversations", "Close conversations", "Conversations"],
  ]) {
    it(`keeps the focus in the ${title} drawer, closes it with Escape and gives the focus back`, async () => {
      const page = await suite.openPage();
      await page.getByRole("button", { name: open, exact: true }).focus();
      await page.keyboard.press("Enter");
      const drawer = page.getByRole("dialog", { name: title });
      await drawer.waitFor();
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press("Tab");
        const inside = await page.evaluate(() => Boolean(document.activeElement?.closest("dialog[open]")));
        expect(inside, `Tab ${i + 1}`).toBe(true);
      }
      await page.keyboard.press("Escape");
      await drawer.waitFor({ state: "hidden" });
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(open);
      await page.keyboard.press("Enter");
      await page.getByRole("button", { name: close }).click();
      await drawer.waitFor({ state: "hidden" });
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(open);
    });
  }
});

describe("for a screen reader", () => {
  it("has landmarks, a name for every button and image, and no live region redrawn with each token", async () => {
    const page = await suite.openPage();
    await cannedAnswers(page, ["A photo.\n\n```python\nprint(1)\n```"]);
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "What is it?");
    await waitForAnswer(page);
    expect(await page.getByRole("banner").count()).toBe(1);
    expect(await page.getByRole("main").count()).toBe(1);
    expect(await page.getByRole("form", { name: "Ask a question" }).count()).toBe(1);
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>("button, [role=button], summary, img")]
        .filter((node) => node.getClientRects().length > 0)
        .filter((node) =>
          node instanceof HTMLImageElement
            ? !node.hasAttribute("alt")
            : !(node.getAttribute("aria-label") || node.getAttribute("aria-labelledby") || node.textContent?.trim()),
        )
        .map((node) => node.outerHTML.slice(0, 120)),
    );
    expect(unnamed).toEqual([]);
    const live = await page.evaluate(() =>
      [...document.querySelectorAll("[aria-live], [role=log], [role=status], [role=alert]")]
        .filter((node) => node.getAttribute("aria-live") !== "off")
        .filter((node) => node.querySelector("article"))
        .map((node) => node.id),
    );
    expect(live).toEqual([]);
  });

  it("reads an answer out one block at a time as it is written, politely", async () => {
    const page = await suite.openPage();
    await slowAnswer(page, "First, the sky.\n\nThen the *sea*, which is wide.\n\nThe end.", 60);
    // Each change of the log as it happens, and whether the answer was still being written
    // then: polling for the one-block state missed it on a loaded machine.
    await page.evaluate(() => {
      const log = document.getElementById("announcer")!;
      const heard: { blocks: number; writing: boolean }[] = [];
      Object.assign(window, { heard });
      new MutationObserver(() => {
        const writing = document.querySelector("article.assistant[aria-busy='true']") !== null;
        heard.push({ blocks: log.querySelectorAll("p").length, writing });
      }).observe(log, { childList: true, subtree: true, characterData: true });
    });
    await ask(page, "Describe it.");
    const log = page.locator("#announcer");
    expect(await log.getAttribute("aria-live")).toBe("polite");
    await waitForAnswer(page);
    expect(await log.locator("p").allInnerTexts()).toEqual([
      "First, the sky.",
      "Then the sea, which is wide.",
      "The end.",
    ]);
    const heard = await page.evaluate(
      () => (window as unknown as { heard: { blocks: number; writing: boolean }[] }).heard,
    );
    // The first block was read out while the answer was still being written.
    const first = heard.find((h) => h.blocks > 0);
    expect(first?.writing).toBe(true);
    expect(first?.blocks).toBeLessThan(3);
  });

  it("announces a failed answer as an alert", async () => {
    const page = await suite.openPage();
    await page.route("**/v1/chat/completions", (route) =>
      route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"message":"busy"}}' }),
    );
    await ask(page, "Hello?");
    await waitForAnswer(page);
    const alert = answers(page).last().getByRole("alert");
    expect(await alert.innerText()).not.toBe("");
  });
});

/** Every piece of visible text whose contrast on what is behind it is under 4.5:1. */
function lowContrast(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Rgba = [number, number, number, number];
    const parse = (colour: string): Rgba => {
      const [r, g, b, a = 1] = (colour.match(/[\d.]+/g) ?? ["0", "0", "0", "0"]).map(Number);
      return [r, g, b, colour.startsWith("rgba") || colour.includes("/") ? a : 1];
    };
    const over = (top: Rgba, bottom: Rgba): Rgba => {
      const a = top[3];
      return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1) as Rgba;
    };
    const luminance = ([r, g, b]: Rgba) => {
      const channel = (v: number) => ((v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    const background = (node: Element | null): Rgba => {
      const layers: Rgba[] = [];
      for (let at = node; at; at = at.parentElement) {
        const colour = parse(getComputedStyle(at).backgroundColor);
        if (colour[3] > 0) layers.push(colour);
        if (colour[3] === 1) break;
      }
      return layers.reduceRight<Rgba>((below, layer) => over(layer, below), [255, 255, 255, 1]);
    };
    const failures: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const node = text.parentElement!;
      if (
        !text.textContent?.trim() ||
        node.closest("[hidden], .visually-hidden, .katex, [disabled], dialog:not([open])")
      )
        continue;
      if (node.getClientRects().length === 0) continue;
      const style = getComputedStyle(node);
      if (style.visibility === "hidden" || Number(style.opacity) === 0) continue;
      const back = background(node);
      const fore = over(parse(style.color), back);
      const [light, dark] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
      const ratio = (light + 0.05) / (dark + 0.05);
      if (ratio < 4.5)
        failures.push(
          `${node.tagName}.${node.className} "${text.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`,
        );
    }
    return failures;
  });
}

describe("colours", () => {
  for (const scheme of ["light", "dark"] as const) {
    it(`keep text at 4.5:1 or more in the ${scheme} theme`, async () => {
      const page = await suite.openPage();
      await page.emulateMedia({ colorScheme: scheme });
      expect(await lowContrast(page)).toEqual([]);
      await cannedAnswers(
        page,
        [
          '# Title\n\nSome **bold** and a [link](https://example.com) and `code`.\n\n```python\ndef f(x):  # square\n    return "x" * 2 + 1\n```\n\n| a | b |\n|---|---:|\n| 1 | 2 |\n\n> quoted',
        ],
        CANNED_TIMINGS,
      );
      await pickWithCamera(page, [PHOTO()]);
      await ask(page, "Everything?");
      await waitForAnswer(page);
      await answers(page).last().locator(".hljs-keyword").first().waitFor();
      await answers(page).last().locator(".stats summary").click();
      expect(await lowContrast(page)).toEqual([]);
      await page.getByRole("button", { name: "Settings" }).click();
      await page.getByRole("dialog", { name: "Settings" }).waitFor();
      expect(await lowContrast(page)).toEqual([]);
    });
  }
});
