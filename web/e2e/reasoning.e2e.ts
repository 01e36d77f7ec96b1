// A thinking model's reasoning in a real browser: open while the model thinks, folded to
// "Thought for N s" once the answer begins and opened with a click; copy gives the
// answer, the next question sends the answer back without its reasoning, and a screen
// reader hears that the model thinks, then the answer.
// Answers are canned (the tiny model does not think); the server is real.
import { describe, expect, it } from "vitest";
import { cannedAnswers, slowAnswer, type ThoughtAnswer } from "./canned";
import { answers, ask, recordChatRequests, waitForAnswer } from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();

const THOUGHT: ThoughtAnswer = {
  reasoning:
    "The person asks what colour the sky is.\n\nOn a clear day sunlight scatters off the air, and blue scatters most.",
  text: "The sky is **blue** on a clear day.",
};
const SAID = "The sky is blue on a clear day.";

describe("a thinking model's answer", () => {
  it("shows the reasoning while the model thinks, then folds it above the answer", async () => {
    const page = await suite.openPage();
    await suite.browser().context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.url() });
    await slowAnswer(page, THOUGHT, 80);
    await ask(page, "What colour is the sky?");
    const answer = answers(page).last();
    const reasoning = answer.locator("details.reasoning");
    const text = reasoning.locator(".reasoning-text");
    await reasoning.locator("summary", { hasText: "Thinking…" }).waitFor();
    expect(await reasoning.getAttribute("open")).not.toBeNull();
    await expect.poll(() => text.innerText()).toContain("The person asks");

    await waitForAnswer(page);
    expect(await reasoning.getAttribute("open")).toBeNull();
    expect(await text.isVisible()).toBe(false);
    expect(await reasoning.locator("summary").innerText()).toMatch(/^Thought for (less than a second|\d+ s)$/);
    expect(await answer.locator(":scope > .markdown").innerText()).toBe(SAID);
    await reasoning.locator("summary").click();
    expect(await text.innerText()).toContain("blue scatters most");

    await answer.getByRole("button", { name: "Copy the answer" }).click();
    await answer.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(THOUGHT.text);
    expect(await page.locator("#announcer p").allInnerTexts()).toEqual(["Thinking…", SAID]);
  });

  it("is sent back without its reasoning", async () => {
    const page = await suite.openPage();
    const requests = recordChatRequests(page);
    await cannedAnswers(page, [THOUGHT, "Yes."]);
    await ask(page, "What colour is the sky?");
    await waitForAnswer(page);
    await ask(page, "Sure?");
    await waitForAnswer(page, 60_000, "Yes.");
    expect(requests).toHaveLength(2);
    expect(requests[1].messages.slice(-3)).toEqual([
      { role: "user", content: "What colour is the sky?" },
      { role: "assistant", content: THOUGHT.text },
      { role: "user", content: "Sure?" },
    ]);
    expect(JSON.stringify(requests[1])).not.toContain("scatters");
  });
});
