// How answers and images are laid out in a real browser: wide and aligned Markdown
// tables, the opened speed details, and where focus goes when an image opens large.
// Answers are canned; the server is real.
import { describe, expect, it } from "vitest";
import { PHONE } from "./browser";
import { cannedAnswers } from "./canned";
import { answers, ask, PHOTO, pickWithCamera, waitForAnswer } from "./page_driver";
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
