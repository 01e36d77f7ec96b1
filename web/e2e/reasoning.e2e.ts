// A thinking model's reasoning in a real browser: open while the model thinks, folded to
// "Thought for N s" once the answer begins and opened with a click; copy gives the
// answer, the next question sends the answer back without its reasoning, and a screen
// reader hears that the model thinks, then the answer. Those answers are canned (the tiny
// model does not think); the server is real. Then the tiny model served with the Thinking
// template, whose reasoning only a thinking budget ends: the server's, or the one set in
// the settings.
import type { Locator } from "playwright-core";
import { describe, expect, it } from "vitest";
import { cannedAnswers, slowAnswer, type ThoughtAnswer } from "./canned";
import { answers, ask, recordChatRequests, setMaxTokens, waitForAnswer } from "./page_driver";
import { EXTERNAL_SERVER } from "./qvl_server";
import { pageSuite } from "./suite";
import { thinkingModelFolder } from "./thinking_model";

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

/** The "Answer tokens" figure of `answer`'s details. */
async function answerTokens(answer: Locator): Promise<string> {
  const rows = await answer.locator(".stats dt, .stats dd").allTextContents();
  return rows[rows.indexOf("Answer tokens") + 1];
}

describe.skipIf(EXTERNAL_SERVER)("a thinking budget", () => {
  const SERVER_BUDGET = 2;
  const budgetSuite = pageSuite(["--thinking-budget", String(SERVER_BUDGET)], thinkingModelFolder);

  it("is the server's until one is set in the settings, which is sent and ends the reasoning there", async () => {
    const page = await budgetSuite.openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 12);

    // The reasoning tokens count "</think>" too: the budget's tokens and one.
    await ask(page, "Why is the sky blue?");
    await waitForAnswer(page);
    expect(requests[0].max_tokens).toBe(12);
    expect(requests[0]).not.toHaveProperty("thinking_token_budget");
    expect(await answerTokens(answers(page).last())).toBe(`12 (${SERVER_BUDGET + 1} thinking)`);

    await page.getByRole("button", { name: "Settings" }).click();
    const box = page.getByLabel("Longest thinking, in tokens");
    expect(await box.getAttribute("placeholder")).toBe(`Server default (${SERVER_BUDGET})`);
    const hint = page.locator(`#${await box.getAttribute("aria-describedby")}`);
    expect(await hint.innerText()).toMatch(
      new RegExp(`^Only for models that think .* Empty: the server's default, ${SERVER_BUDGET} tokens\\.$`),
    );
    await box.fill("4");
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "And at night?");
    await waitForAnswer(page);
    expect(requests).toHaveLength(2);
    expect(requests[1].thinking_token_budget).toBe(4);
    const answer = answers(page).last();
    expect(await answerTokens(answer)).toBe("12 (5 thinking)");
    expect(await answer.locator("details.reasoning summary").innerText()).toMatch(/^Thought for/);
  });
});
