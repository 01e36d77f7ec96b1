// The page on a phone, upright and on its side: fingertip-sized controls, long answers
// whose code, tables and formulas scroll sideways inside themselves while the page never
// does, drawers that fit, the question box above the on-screen keyboard, and nothing
// under the notch or the rounded corners (safe-area insets, set through DevTools).
// Answers are canned; the server is real.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { cannedAnswers } from "./canned";
import { answers, ask, PHOTO, pickWithCamera, waitForAnswer } from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();

const PHONES = [
  { width: 375, height: 667 },
  { width: 390, height: 844 },
  { width: 667, height: 375 },
  { width: 844, height: 390 },
];

const LONG_ANSWER = [
  "Here is everything at once.",
  "```python\nrecords = load('" + "a_very_long_path_segment/".repeat(8) + "data.csv')\n```",
  [
    "| Name | Quantity | Unit price | Supplier | Warehouse | Delivery date | Remarks | Contact | Origin |",
    "|---|---:|---:|---|---|---|---|---|---|",
    "| Tomatoes | 120 | 0.45 | Greenfields Cooperative | North depot | 2024-05-01 | Keep refrigerated " +
      "| Maria Gonzales-Whitfield | Southern Andalusia |",
  ].join("\n"),
  "$$\\sum_{i=1}^{n} i" + " = \\frac{n(n+1)}{2} = \\frac{n^2}{2} + \\frac{n}{2}".repeat(6) + "$$",
  "See https://example.com/" + "averyveryverylongpathwithoutanybreaks".repeat(4) + " for more.",
  "Long words like Donaudampfschifffahrtsgesellschaftskapitänskajüte wrap too. ".repeat(30),
].join("\n\n");

/** Controls a fingertip cannot hit: a 44 px cross on their centre leaves them. */
function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const controls = document.querySelectorAll<HTMLElement>(
      // A radio button is tapped through its label, which is judged instead.
      "button, a[href], input:not([type=file], [type=radio]), textarea, select, summary, label.choice",
    );
    const scope = document.querySelector("dialog[open]") ?? document;
    const small: string[] = [];
    for (const control of controls) {
      if (!scope.contains(control) || control.getClientRects().length === 0) continue;
      const box = control.getBoundingClientRect();
      if (box.bottom < 0 || box.top > innerHeight || box.right < 0 || box.left > innerWidth) continue;
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      const points = [
        [x, y - 21.5],
        [x, y + 21.5],
        [x - 21.5, y],
        [x + 21.5, y],
      ];
      // The part of the page the control can show in: boxes that scroll clip it.
      let clip = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
      for (let at = control.parentElement; at; at = at.parentElement) {
        if (getComputedStyle(at).overflow === "visible") continue;
        const edge = at.getBoundingClientRect();
        clip = {
          left: Math.max(clip.left, edge.left),
          top: Math.max(clip.top, edge.top),
          right: Math.min(clip.right, edge.right),
          bottom: Math.min(clip.bottom, edge.bottom),
        };
      }
      // A point passes on the control, outside what shows of it, or on another control
      // laid over it (the suggestions' "more" arrow), which is judged on its own.
      const passes = ([px, py]: number[]) => {
        if (px < clip.left || px > clip.right || py < clip.top || py > clip.bottom) return true;
        const at = document.elementFromPoint(px, py);
        if (!at) return false;
        if (control.contains(at) || (control instanceof HTMLLabelElement && control === at.closest("label")))
          return true;
        const other = at.closest("button, a[href], input, textarea, summary, label")?.getBoundingClientRect();
        return (
          other !== undefined &&
          other.left < box.right &&
          other.right > box.left &&
          other.top < box.bottom &&
          other.bottom > box.top
        );
      };
      if (!points.every(passes)) {
        const name = control.getAttribute("aria-label") ?? control.textContent?.trim().slice(0, 24) ?? "";
        small.push(`${control.tagName.toLowerCase()} "${name}" ${Math.round(box.width)}x${Math.round(box.height)}`);
      }
    }
    return small;
  });
}

describe("on a phone", () => {
  it("every control is at least 44 px for a fingertip, in the conversation and the drawers", async () => {
    const page = await suite.openPage(PHONES[0], { touch: true });
    // With a thinking model's reasoning, whose folded summary is a control too.
    await cannedAnswers(page, [{ reasoning: "Code, then.", text: "Some code:\n\n```python\nprint(1)\n```\n\nDone." }]);
    await pickWithCamera(page, [PHOTO()]);
    expect(await smallTargets(page)).toEqual([]); // with the picture waiting to be sent
    await ask(page, "Code?");
    await waitForAnswer(page);
    for (const block of ["article.message.user", "article.message.assistant"]) {
      // Centred: scrolled flush with the question box, a control's edge meets it within
      // a fraction of a pixel, which hit testing gives to either.
      await page
        .locator(block)
        .last()
        .evaluate((node) => node.scrollIntoView({ block: "center" }));
      // Scrolled up from the end, the "scroll to the latest" button shows (on the scroll
      // event, a frame later): waited for, so that it is judged too.
      if (block === "article.message.user") await page.locator("#jump-button").waitFor({ state: "visible" });
      expect(await smallTargets(page)).toEqual([]);
    }
    await page.getByRole("button", { name: "Settings" }).click();
    await page.locator("#more-sampling > summary").click();
    await page.getByRole("button", { name: "Add a stop string" }).click();
    for (const y of [0, 600, 1200, 1800, 2400]) {
      await page.locator("#settings-dialog").evaluate((node, top) => node.scrollTo(0, top), y);
      expect(await smallTargets(page), `settings scrolled to ${y}`).toEqual([]);
    }
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: "Conversations" }).click();
    await page.getByRole("dialog", { name: "Conversations" }).waitFor();
    expect(await smallTargets(page)).toEqual([]);
  });

  for (const phone of PHONES) {
    it(`at ${phone.width}×${phone.height} a long answer never scrolls the page sideways`, async () => {
      const page = await suite.openPage(phone, { touch: true });
      await cannedAnswers(page, [LONG_ANSWER]);
      await ask(page, "Everything?");
      await waitForAnswer(page);
      const answer = answers(page).last();
      await answer.locator(".maths .katex").waitFor();
      const overflow = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        scroller: document.querySelector("#scroller")!.scrollWidth - document.querySelector("#scroller")!.clientWidth,
      }));
      expect(overflow).toEqual({ page: 0, scroller: 0 });
      // Code, table and formula are wider than the screen: each scrolls inside its own box.
      for (const wide of ["pre", "table", ".maths-display"]) {
        const box = answer.locator(wide).first();
        const sideways = await box.evaluate((node) => {
          const scroller = node.closest("pre, table, .maths-display")!;
          return { more: scroller.scrollWidth > scroller.clientWidth, scrolls: getComputedStyle(scroller).overflowX };
        });
        expect(sideways, wide).toEqual({ more: true, scrolls: "auto" });
      }
      for (const dialog of ["Settings", "Conversations"]) {
        await page.getByRole("button", { name: dialog, exact: true }).click();
        const opened = page.getByRole("dialog", { name: dialog });
        await opened.waitFor();
        const drawer = await opened.boundingBox();
        expect(drawer!.x).toBeGreaterThanOrEqual(0);
        expect(drawer!.x + drawer!.width).toBeLessThanOrEqual(phone.width);
        expect(drawer!.height).toBe(phone.height);
        await page.keyboard.press("Escape");
        await opened.waitFor({ state: "hidden" });
      }
    });
  }

  it("takes a photo with the camera, and names a HEIC photo this browser cannot convert", async () => {
    const page = await suite.openPage(PHONES[1], { touch: true });
    const camera = page.locator("#camera-input");
    expect(await camera.getAttribute("capture")).toBe("environment");
    expect((await camera.getAttribute("accept"))!.split(",")).toEqual(
      expect.arrayContaining(["image/jpeg", "image/heic", ".heic", "image/heif", "video/mp4"]),
    );
    // Chromium reads no HEIC: the bytes here are a HEIC file's first box and nothing more.
    const heic = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("ftypheic\0\0\0\0mif1heic")]);
    await pickWithCamera(page, [{ name: "IMG_0001.HEIC", mimeType: "image/heic", buffer: heic }]);
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe(
        '"IMG_0001.HEIC" is a HEIC photo, which this browser cannot convert. Use a JPEG, PNG, WebP, GIF or BMP file.' +
          " An iPhone takes JPEG photos with Settings › Camera › Formats › Most Compatible.",
      );
    await pickWithCamera(page, [PHOTO()]);
    await page.locator("#attachments img").waitFor();
  });

  it("keeps the question box and the top bar in sight above the on-screen keyboard", async () => {
    const page = await suite.openPage(PHONES[0], { touch: true });
    expect(await page.locator('meta[name="viewport"]').getAttribute("content")).toContain(
      "interactive-widget=resizes-content",
    );
    await cannedAnswers(page, ["A long answer. ".repeat(200)]);
    await ask(page, "Long?");
    await waitForAnswer(page);
    await page.locator("#prompt").focus();
    // What resizes-content does when the keyboard (here 300 px) opens.
    await page.setViewportSize({ width: 375, height: 367 });
    for (const part of ["#prompt", "#send-button", "#settings-button"]) {
      const box = (await page.locator(part).boundingBox())!;
      expect(box.y, part).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height, part).toBeLessThanOrEqual(367);
    }
  });

  it("keeps text and controls clear of the notch and the rounded corners", async () => {
    const page = await suite.openPage(PHONES[3], { touch: true });
    const insets = { top: 20, left: 47, right: 47, bottom: 21 };
    const devtools = await page.context().newCDPSession(page);
    await devtools.send("Emulation.setSafeAreaInsetsOverride", { insets });
    await cannedAnswers(page, ["Answer text that runs along the whole width of the screen. ".repeat(6)]);
    await ask(page, "Wide?");
    await waitForAnswer(page);
    const outside = (selector: string) =>
      page.evaluate(
        ({ selector, insets }) =>
          [...document.querySelectorAll<HTMLElement>(selector)]
            .filter((node) => node.getClientRects().length > 0)
            .map((node) => ({ node, box: node.getBoundingClientRect() }))
            .filter(
              ({ box }) =>
                box.left < insets.left ||
                box.right > innerWidth - insets.right ||
                (box.top < insets.top && box.bottom > 0) ||
                (box.bottom > innerHeight - insets.bottom && box.top < innerHeight),
            )
            .map(({ node, box }) => `${node.tagName}#${node.id}.${node.className} ${JSON.stringify(box)}`),
        { selector, insets },
      );
    const controls = "header button, .brand, #composer button:not([hidden]), #prompt, .markdown p";
    expect(await outside(controls)).toEqual([]);
    await page.getByRole("button", { name: "Conversations" }).click();
    // The drawer opens once the stored conversations are read: an Escape before then is lost.
    const conversations = page.getByRole("dialog", { name: "Conversations" });
    await conversations.waitFor();
    expect(await outside("#history-dialog h2, #history-dialog button")).toEqual([]);
    await page.keyboard.press("Escape");
    await conversations.waitFor({ state: "hidden" });
    await page.getByRole("button", { name: "Settings" }).click();
    expect(await outside("#settings-dialog h2, #settings-dialog .drawer-header button")).toEqual([]);
  });
});
