// How answers and images are laid out in a real browser: wide and aligned Markdown
// tables, syntax colours in code blocks, maths drawn in KaTeX's fonts (also while the
// answer is still coming), the opened speed details, and where focus goes when an
// image opens large.
// Answers are canned; the server is real.
import { describe, expect, it } from "vitest";
import { PHONE } from "./browser";
import { cannedAnswers, slowAnswer } from "./canned";
import { answers, ask, PHOTO, pickWithCamera, waitForAnswer, waitForPageReady } from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();
const openPage = suite.openPage;

const WIDE_TABLE = [
  "| Quarter | Units sold | Average price | Best selling region | Returned units | Notes from the sales team |",
  "|---|---:|:---:|---|---:|---|",
  "| First | 120 | 14.50 | Northern coast | 4 | Slow start after the holidays |",
  "| Second | 185 | 14.20 | Mountain villages | 7 | Spring promotion worked well |",
].join("\n");

describe("answers", () => {
  it("scroll a wide table sideways on a phone, keeping words whole and columns aligned", async () => {
    const page = await openPage(PHONE);
    await cannedAnswers(page, [WIDE_TABLE]);
    await ask(page, "Make a table.");
    await waitForAnswer(page);
    const table = answers(page).last().locator(".markdown table");
    const overflow = await table.evaluate((node) => node.scrollWidth - node.clientWidth);
    expect(overflow).toBeGreaterThan(0);
    // A word broken across lines has more than one box.
    const brokenWords = await table.evaluate((node) => {
      const broken: string[] = [];
      const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        for (const match of (text.textContent ?? "").matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(text, match.index);
          range.setEnd(text, match.index + match[0].length);
          if (range.getClientRects().length > 1) broken.push(match[0]);
        }
      }
      return broken;
    });
    expect(brokenWords).toEqual([]);

    const alignments = await table.evaluate((node) =>
      [...node.querySelectorAll("tr")].map((row) =>
        [...row.children].slice(0, 3).map((cell) => getComputedStyle(cell).textAlign),
      ),
    );
    expect(alignments).toEqual([
      ["left", "right", "center"],
      ["left", "right", "center"],
      ["left", "right", "center"],
    ]);
  });

  it("colour code in the page's theme, light or dark", async () => {
    const page = await openPage();
    await cannedAnswers(page, ["```python\ndef area(r):\n    return 3.14 * r ** 2\n```"]);
    await ask(page, "Write a function.");
    await waitForAnswer(page);
    const keyword = answers(page).last().locator("pre code.language-python .hljs-keyword").first();
    expect(await keyword.innerText()).toBe("def");
    const colour = () => keyword.evaluate((node) => getComputedStyle(node).color);
    const plain = await answers(page)
      .last()
      .locator("pre code")
      .evaluate((node) => getComputedStyle(node).color);
    const light = await colour();
    expect(light).not.toBe(plain);
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await colour()).not.toBe(light);
  });

  it("fetch highlight.js and KaTeX only once an answer has code or maths", async () => {
    const page = await openPage();
    const fetched: string[] = [];
    page.on("request", (request) => fetched.push(new URL(request.url()).pathname));
    await page.reload();
    await waitForPageReady(page);
    const lazy = () => fetched.filter((path) => /\/assets\/(highlight|maths_render)-/.test(path)).sort();
    await cannedAnswers(page, ["Plain words, `inline code`, $5.", "```python\nimport os\n```", "So $x^2$."]);
    await ask(page, "Plain?");
    await waitForAnswer(page);
    expect(lazy()).toEqual([]);
    await ask(page, "Code?");
    await waitForAnswer(page);
    await answers(page).last().locator(".hljs-keyword").waitFor();
    expect(lazy()).toEqual([expect.stringMatching(/^\/assets\/highlight-[\w-]+\.js$/)]);
    await ask(page, "Maths?");
    await waitForAnswer(page);
    await answers(page).last().locator(".maths .katex").waitFor();
    expect(lazy()).toHaveLength(3); // and KaTeX's script and style sheet
  });

  it("draw maths with KaTeX's fonts, prices and code left alone", async () => {
    const page = await openPage();
    await cannedAnswers(page, [
      "The roots of $ax^2+bx+c=0$ are\n\n$$x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}$$\n\nIt costs $5 and $10; `$x$` is code.",
    ]);
    await ask(page, "Solve it.");
    await waitForAnswer(page);
    const markdown = answers(page).last().locator(".markdown");
    // Drawn once KaTeX has arrived (src/lazy_modules.ts).
    await markdown.locator(".maths-display").waitFor();
    expect(await markdown.locator(".maths").count()).toBe(2);
    expect(await markdown.locator(".maths-display .katex-display .mfrac").count()).toBe(1);
    expect(await markdown.locator(".maths").first().getAttribute("aria-label")).toBe("ax^2+bx+c=0");
    expect(await markdown.locator("p").last().innerText()).toBe("It costs $5 and $10; $x$ is code.");
    expect(await markdown.locator("p").last().locator("code").innerText()).toBe("$x$");
    // The fonts come from the server, as woff2.
    await expect
      .poll(() =>
        page.evaluate(() => document.fonts.check("16px KaTeX_Main") && document.fonts.check("16px KaTeX_Math")),
      )
      .toBe(true);
    const loaded = await page.evaluate(
      () => [...document.fonts].filter((font) => font.family.startsWith("KaTeX") && font.status === "loaded").length,
    );
    expect(loaded).toBeGreaterThan(0);
  });

  it("show a formula still being written as text, never a broken drawing", async () => {
    const page = await openPage();
    await slowAnswer(page, "Here: $$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$ done.", 120);
    await ask(page, "Sum it.");
    const answer = answers(page).last();
    const seen = new Set<string>();
    while ((await answer.getAttribute("aria-busy")) !== "false") {
      seen.add(await answer.locator(".markdown").innerHTML());
      await page.waitForTimeout(40);
    }
    for (const html of seen) expect(html).not.toContain("maths-error");
    // Drawn once KaTeX has arrived (src/lazy_modules.ts).
    await answer.locator(".maths-display").waitFor();
    expect(await answer.locator(".maths-display").count()).toBe(1);
  });

  it("show the opened speed details on their own row below the buttons", async () => {
    const page = await openPage();
    await cannedAnswers(page, ["Short answer."]);
    await ask(page, "Hello?");
    await waitForAnswer(page);
    const meta = answers(page).last().locator(".answer-meta");
    await meta.locator(".stats summary").click();
    const details = (await meta.locator(".stats").boundingBox())!;
    const footer = (await meta.boundingBox())!;
    expect(details.height).toBeGreaterThan(100);
    expect(details.width).toBeCloseTo(footer.width, 0);
    for (const name of ["Copy the answer", "Regenerate the answer"]) {
      const button = (await meta.getByRole("button", { name }).boundingBox())!;
      expect(button.y + button.height).toBeLessThanOrEqual(details.y);
    }
  });
});

describe("the lightbox", () => {
  it("gives focus to its close button when an image opens", async () => {
    const page = await openPage();
    await pickWithCamera(page, [PHOTO()]);
    await page.getByRole("button", { name: "Show image 1 large (photo.jpg)" }).click();
    await page.getByRole("dialog", { name: "Image 1: photo.jpg" }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("lightbox-close");
  });
});
