// The conversations drawer: a conversation renamed in place (from the keyboard, the one on
// screen too, kept across reloads) and conversations found by the words of their titles
// and messages. Answers are canned; the server is real.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { cannedAnswers } from "./canned";
import { answers, ask, waitForAnswer } from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();
const openPage = suite.openPage;

function focusedLabel(page: Page): Promise<string | null | undefined> {
  return page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
}

describe("the conversations drawer", () => {
  it("renames a conversation in place and finds conversations by their words", async () => {
    const page = await openPage();
    await cannedAnswers(page, ["Bonjour.", "Q4 sold best.", "Q1 sold least."]);
    await ask(page, "Hello?");
    await waitForAnswer(page);
    await page.getByRole("button", { name: "New conversation" }).click();
    await ask(page, "Which quarter sold best?");
    await waitForAnswer(page);

    await page.getByRole("button", { name: "Conversations" }).click();
    const dialog = page.getByRole("dialog", { name: "Conversations" });
    const titles = () => dialog.locator(".history-title").allInnerTexts();
    await expect.poll(titles).toEqual(["Which quarter sold best?", "Hello?"]);

    // Found as typed, by an answer's words too, in any case.
    const search = dialog.getByRole("searchbox", { name: "Search conversations" });
    await search.pressSequentially("BONJ");
    await expect.poll(titles).toEqual(["Hello?"]);
    await expect.poll(() => page.locator("#history-search-status").textContent()).toBe("1 conversation matches.");
    await search.fill("unicorn");
    expect(await dialog.locator(".history-empty").innerText()).toBe(
      "No conversation has “unicorn” in its title or messages.",
    );
    // Escape empties the search; the drawer stays open.
    await search.press("Escape");
    expect(await search.inputValue()).toBe("");
    expect(await dialog.isVisible()).toBe(true);
    await expect.poll(titles).toHaveLength(2);

    // From the keyboard: Escape gives the edit up without closing the drawer, Enter keeps it.
    await dialog.getByRole("button", { name: "Rename “Hello?”" }).focus();
    await page.keyboard.press("Enter");
    const box = dialog.getByRole("textbox", { name: "New name for “Hello?”" });
    expect(await box.evaluate((node) => node === document.activeElement)).toBe(true);
    await box.fill("Not kept");
    await box.press("Escape");
    expect(await dialog.isVisible()).toBe(true);
    await expect.poll(titles).toEqual(["Which quarter sold best?", "Hello?"]);
    expect(await focusedLabel(page)).toBe("Rename “Hello?”");
    await page.keyboard.press("Enter");
    await box.fill("French greeting");
    await box.press("Enter");
    await expect.poll(titles).toEqual(["Which quarter sold best?", "French greeting"]);
    await expect.poll(() => focusedLabel(page)).toBe("Rename “French greeting”");

    // The conversation on screen keeps its new name through its next answer and a reload.
    await dialog.getByRole("button", { name: "Rename “Which quarter sold best?”" }).click();
    await dialog.getByRole("textbox", { name: "New name for “Which quarter sold best?”" }).fill("Sales");
    await page.keyboard.press("Enter");
    await expect.poll(titles).toEqual(["Sales", "French greeting"]);
    await page.getByRole("button", { name: "Close conversations" }).click();
    await ask(page, "And the worst?");
    await waitForAnswer(page);
    await page.reload();
    await answers(page).first().waitFor();
    await page.getByRole("button", { name: "Conversations" }).click();
    await expect.poll(titles).toEqual(["Sales", "French greeting"]);
    await search.fill("greet");
    await expect.poll(titles).toEqual(["French greeting"]);
    await dialog.locator(".history-open").click();
    await expect.poll(() => answers(page).allInnerTexts()).toEqual([expect.stringContaining("Bonjour.")]);
  });
});
