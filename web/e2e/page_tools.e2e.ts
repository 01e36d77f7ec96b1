// The page's tools around the conversation: the button back to the latest text, long
// questions folded, the context meter, the sampling settings, downloading a conversation,
// and the instructions (system prompt) each conversation keeps. The server is real;
// answers are canned where their words or token counts matter.
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { PHONE } from "./browser";
import { cannedAnswers, CANNED_TIMINGS, slowAnswer, TABLE_ANSWER } from "./canned";
import {
  answers,
  ask,
  PHOTO,
  pickWithCamera,
  recordChatRequests,
  setMaxTokens,
  waitForAnswer,
  type ChatRequestRecord,
} from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();
const openPage = suite.openPage;

/** A long answer, several screens tall. */
const LONG_ANSWER = `${TABLE_ANSWER}\n\n${Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1}: ${"the quick brown fox jumps over the lazy dog. ".repeat(4)}`).join("\n\n")}`;

const scroller = (page: Page) => page.locator("#scroller");
const jumpButton = (page: Page) => page.getByRole("button", { name: "Scroll to the latest" });

function distanceFromEnd(page: Page): Promise<number> {
  return scroller(page).evaluate((box) => box.scrollHeight - box.scrollTop - box.clientHeight);
}

function scrollTop(page: Page): Promise<number> {
  return scroller(page).evaluate((box) => box.scrollTop);
}

async function wheelUp(page: Page, pixels: number): Promise<void> {
  await page.mouse.move(640, 300);
  await page.mouse.wheel(0, -pixels);
}

function answerLength(page: Page): Promise<number> {
  return answers(page)
    .last()
    .locator(".markdown")
    .evaluate((node) => node.textContent?.length ?? 0);
}

function systemOf(request: ChatRequestRecord): unknown {
  return request.messages[0].role === "system" ? request.messages[0].content : undefined;
}

describe("the page's tools", () => {
  it("offers a way back to the latest text once scrolled up, while an answer streams and after", async () => {
    const page = await openPage();
    await cannedAnswers(page, [LONG_ANSWER]);
    await ask(page, "Tell me a long story.");
    await waitForAnswer(page);
    expect(await distanceFromEnd(page)).toBeLessThanOrEqual(1);
    expect(await jumpButton(page).isHidden()).toBe(true);

    // After the answer: scrolled up, the button brings the end back.
    await wheelUp(page, 800);
    await jumpButton(page).waitFor();
    await jumpButton(page).click();
    await expect.poll(() => distanceFromEnd(page)).toBeLessThanOrEqual(1);
    expect(await jumpButton(page).isHidden()).toBe(true);

    // While it streams: scrolled up, the view stays where the reader is...
    await slowAnswer(page, LONG_ANSWER, 40);
    await ask(page, "And another one.");
    const streaming = answers(page).last();
    await expect.poll(() => answerLength(page), { timeout: 10_000 }).toBeGreaterThan(600);
    await wheelUp(page, 600);
    await jumpButton(page).waitFor();
    await page.waitForTimeout(200);
    const reading = await scrollTop(page);
    const lengthThen = await answerLength(page);
    await page.waitForTimeout(800);
    expect(await streaming.getAttribute("aria-busy")).toBe("true");
    expect(await answerLength(page)).toBeGreaterThan(lengthThen);
    expect(Math.abs((await scrollTop(page)) - reading)).toBeLessThanOrEqual(1);

    // ...and the button jumps to the end and follows the answer again.
    await jumpButton(page).click();
    await expect.poll(() => distanceFromEnd(page)).toBeLessThanOrEqual(1);
    const followedFrom = await answerLength(page);
    await expect.poll(() => answerLength(page), { timeout: 5000 }).toBeGreaterThan(followedFrom + 100);
    expect(await distanceFromEnd(page)).toBeLessThanOrEqual(2);
    expect(await jumpButton(page).isHidden()).toBe(true);

    // From the keyboard, focus goes on to the question box once the button is gone.
    await wheelUp(page, 600);
    await jumpButton(page).waitFor();
    await page.locator("#prompt").focus();
    for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement?.id)) !== "jump-button"; i++) {
      await page.keyboard.press("Shift+Tab");
    }
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("prompt");
    expect(await distanceFromEnd(page)).toBeLessThanOrEqual(2);
    await page.getByRole("button", { name: "Stop the answer" }).click();
    await waitForAnswer(page);
  });

  it("sits the button above the question box on a phone", async () => {
    const page = await openPage(PHONE);
    await cannedAnswers(page, [LONG_ANSWER]);
    await page.locator("#prompt").fill("Tell me a long story.");
    await page.getByRole("button", { name: "Send" }).click();
    await waitForAnswer(page);
    await scroller(page).evaluate((box) => box.scrollBy(0, -1000));
    await jumpButton(page).waitFor();
    const button = (await jumpButton(page).boundingBox())!;
    const composer = (await page.locator(".composer").boundingBox())!;
    expect(button.y + button.height).toBeLessThanOrEqual(composer.y);
    expect(Math.abs(button.x + button.width / 2 - PHONE.width / 2)).toBeLessThan(2);
    expect(button.width).toBeGreaterThanOrEqual(40);
    await jumpButton(page).click();
    await expect.poll(() => distanceFromEnd(page)).toBeLessThanOrEqual(1);
  });

  it("folds a long pasted question, sends all of it, and unfolds it from the keyboard", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await cannedAnswers(page, ["Got it: 1,900 lines.", "Yes."]);
    const pasted = Array.from({ length: 1900 }, (_, i) => `${i + 1}\tINFO request served in ${i % 97} ms`).join("\n");
    expect(pasted.length).toBeGreaterThan(60_000);
    await ask(page, pasted, "pasted");
    await waitForAnswer(page);
    expect(lastUserContent(requests[0])).toBe(pasted);

    const question = page.locator("article.message.user").first();
    const text = question.locator(".message-text");
    const toggle = question.getByRole("button", { name: "Show more" });
    expect((await text.boundingBox())!.height).toBeLessThan(200);
    expect(await text.innerText()).toContain("1\tINFO request served in 0 ms");
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");

    await ask(page, "Is that all?");
    await waitForAnswer(page);
    await toggle.focus();
    const before = await scrollTop(page);
    await page.keyboard.press("Enter");
    const unfold = question.getByRole("button", { name: "Show less" });
    expect(await unfold.getAttribute("aria-expanded")).toBe("true");
    expect((await text.boundingBox())!.height).toBeGreaterThan(10_000);
    // The text opens in place for reading: the view does not run to the end of the page.
    await page.waitForTimeout(200);
    expect(Math.abs((await scrollTop(page)) - before)).toBeLessThan(40);
    expect(await jumpButton(page).isVisible()).toBe(true);

    await unfold.focus();
    await page.keyboard.press("Space");
    expect((await text.boundingBox())!.height).toBeLessThan(200);
    expect(await toggle.isVisible()).toBe(true);
    expect(await toggle.evaluate((node) => node === document.activeElement)).toBe(true);
    const box = (await toggle.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(800);

    // A short question gets no button; after a reload the long one is folded again.
    expect(await page.locator("article.message.user").last().locator(".text-toggle").isHidden()).toBe(true);
    await page.reload();
    await page.locator("article.message.user").first().waitFor();
    expect(await page.getByRole("button", { name: "Show more" }).count()).toBe(1);
  });

  it("shows how much of the context the conversation uses, and warns near the end", async () => {
    const page = await openPage();
    const meter = page.locator("#context-meter");
    expect(await meter.isHidden()).toBe(true);
    await setMaxTokens(page, 8);
    await ask(page, "Hello there.");
    await waitForAnswer(page);
    // The server's own count: prompt and answer tokens of the latest answer.
    const answer = answers(page).last();
    await answer.locator(".stats summary").click();
    const details = await answer.locator(".stats dl").innerText();
    const prompt = Number(/Prompt tokens\s+(\d+)/.exec(details)?.[1]);
    const completion = Number(/Answer tokens\s+(\d+)/.exec(details)?.[1]);
    expect(prompt).toBeGreaterThan(0);
    expect(Number.isInteger(completion)).toBe(true);
    expect(await page.locator("#context-figures").innerText()).toBe(`${prompt + completion} of 16,384 tokens`);
    expect(await page.locator("#context-warning").innerText()).toBe("");

    await cannedAnswers(page, ["A very long answer."], CANNED_TIMINGS, {
      prompt_tokens: 14_100,
      completion_tokens: 500,
    });
    await ask(page, "Go on.");
    await waitForAnswer(page);
    expect(await page.locator("#context-figures").innerText()).toBe("14,600 of 16,384 tokens");
    expect(await meter.getAttribute("class")).toContain("is-warning");
    const warning = page.getByRole("status").filter({ hasText: "89% of the server's context" });
    expect(await warning.innerText()).toContain("answers will soon be cut short");

    // It stays with the conversation across a reload, and a new one starts empty.
    await page.reload();
    await page.locator("article.message.user").first().waitFor();
    await expect.poll(() => page.locator("#context-figures").innerText()).toBe("14,600 of 16,384 tokens");
    await page.locator("#context-warning").getByRole("button", { name: "New conversation" }).click();
    expect(await page.locator("article.message").count()).toBe(0);
    expect(await meter.isHidden()).toBe(true);
    expect(await page.locator("#context-warning").innerText()).toBe("");
  });

  it("sends only the sampling settings changed from the server's defaults, which the server takes", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 12);
    await page.getByRole("button", { name: "Settings" }).click();
    expect(await page.locator("#temperature-value").innerText()).toBe("0.70, the server's default");
    await page.getByText("More sampling settings").click();
    // The placeholders are this server's defaults (/props): the tiny model's generation_config.
    expect(await page.getByLabel("Top P").getAttribute("placeholder")).toBe("Default 0.8");
    expect(await page.getByLabel("Top K").getAttribute("placeholder")).toBe("Default 20");
    expect(await page.getByLabel("Repetition penalty").getAttribute("placeholder")).toBe("Default 1");
    expect(await page.getByLabel("Seed").getAttribute("placeholder")).toBe("Random");
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "Say something.");
    await waitForAnswer(page);
    for (const field of ["temperature", "top_p", "top_k", "min_p", "seed", "stop", "repetition_penalty"]) {
      expect(requests[0]).not.toHaveProperty(field);
    }

    await page.getByRole("button", { name: "Settings" }).click();
    await page.locator("#temperature").focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.locator("#temperature-value").innerText()).toBe("0.75");
    await page.getByLabel("Top P").fill("1.5");
    expect(await page.getByText("Top P must be more than 0 and at most 1.").isVisible()).toBe(true);
    expect(await page.getByLabel("Top P").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Top P").fill("0.9");
    expect(await page.getByText("Top P must be more than 0 and at most 1.").isHidden()).toBe(true);
    await page.getByLabel("Top K").fill("5");
    await page.getByLabel("Min P").fill("0.05");
    await page.getByLabel("Repetition penalty").fill("1.1");
    await page.getByLabel("Presence penalty").fill("-0.5");
    await page.getByLabel("Frequency penalty").fill("0.5");
    await page.getByLabel("Seed").fill("42");
    // As many stop strings as this server takes (/props), so that the button goes away.
    const { limits } = (await (await fetch(`${suite.url()}/props`)).json()) as { limits: { max_stop_strings: number } };
    const typed = ["\\n\\n", "END", "###", "Q:"];
    while (typed.length < limits.max_stop_strings) typed.push(`S${typed.length + 1}`);
    expect(await page.locator("#stop-hint").innerText()).toContain(`up to ${limits.max_stop_strings}.`);
    const add = page.getByRole("button", { name: "Add a stop string" });
    for (const [i, stop] of typed.entries()) {
      await add.click();
      await page.getByLabel(`Stop string ${i + 1}`, { exact: true }).fill(stop);
    }
    expect(await add.isHidden()).toBe(true);
    expect(await page.locator("#sampling-changed").innerText()).toBe("8 changed");
    await page.getByRole("button", { name: "Close settings" }).click();

    await ask(page, "Say it again.");
    await waitForAnswer(page);
    expect(requests[1]).toMatchObject({
      temperature: 0.75,
      top_p: 0.9,
      top_k: 5,
      min_p: 0.05,
      repetition_penalty: 1.1,
      presence_penalty: -0.5,
      frequency_penalty: 0.5,
      seed: 42,
      stop: ["\n\n", "END", "###", "Q:", ...typed.slice(4)],
    });
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    // The same seed, settings and question give the same answer.
    const seeded = await answers(page).last().locator(".markdown").innerText();
    await answers(page).last().getByRole("button", { name: "Regenerate the answer" }).click();
    await expect.poll(() => requests.length).toBe(3);
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".markdown").innerText()).toBe(seeded);

    // Kept across a reload; Reset to defaults sends none of them again.
    await page.reload();
    await page.locator("article.message.user").first().waitFor();
    await page.getByRole("button", { name: "Settings" }).click();
    expect(await page.locator("#more-sampling").evaluate((node: HTMLDetailsElement) => node.open)).toBe(true);
    expect(await page.getByLabel("Top K").inputValue()).toBe("5");
    expect(await page.getByLabel("Stop string 1", { exact: true }).inputValue()).toBe("\\n\\n");
    await page.getByRole("button", { name: "Reset to defaults" }).click();
    expect(await page.getByLabel("Top K").inputValue()).toBe("");
    expect(await page.locator("#stop-list li").count()).toBe(0);
    await page.getByRole("button", { name: "Close settings" }).click();
    // Without a length the tiny model would babble to the server's 2048 tokens.
    await cannedAnswers(page, ["Done."]);
    await ask(page, "Once more.");
    await waitForAnswer(page);
    for (const field of ["temperature", "top_p", "top_k", "min_p", "seed", "stop", "max_tokens"]) {
      expect(requests.at(-1)).not.toHaveProperty(field);
    }
  });

  it("downloads the conversation as Markdown and as JSON", async () => {
    const page = await openPage();
    await page.getByRole("button", { name: "Conversations" }).click();
    expect(await page.locator("#history-export").isHidden()).toBe(true);
    await page.getByRole("button", { name: "Close conversations" }).click();

    await cannedAnswers(page, [TABLE_ANSWER]);
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "Turn the chart into a table.");
    await waitForAnswer(page);
    await page.getByRole("button", { name: "Conversations" }).click();

    const markdown = page.waitForEvent("download");
    await page.getByRole("button", { name: "Download this conversation as Markdown" }).click();
    const md = await markdown;
    expect(md.suggestedFilename()).toBe("qvl-turn-the-chart-into-a-table.md");
    const text = readFileSync((await md.path())!, "utf8");
    expect(text).toMatch(
      /^# Turn the chart into a table\.\n\n\*Exported from qvl on \d{4}-\d\d-\d\d \d\d:\d\d · model model\*/,
    );
    expect(text).toContain("## You\n\n*Image: photo.jpg*\n\nTurn the chart into a table.\n");
    expect(text).toContain(`## Answer\n\n${TABLE_ANSWER}\n`);

    const json = page.waitForEvent("download");
    await page.getByRole("button", { name: "Download this conversation as JSON" }).click();
    const file = await json;
    expect(file.suggestedFilename()).toBe("qvl-turn-the-chart-into-a-table.json");
    const raw = readFileSync((await file.path())!, "utf8");
    expect(raw).not.toContain("base64");
    const record = JSON.parse(raw);
    expect(record.title).toBe("Turn the chart into a table.");
    expect(record.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(record.messages[0].images[0]).toMatchObject({ name: "photo.jpg", width: 320, height: 240 });
    expect(record.messages[1].text).toBe(TABLE_ANSWER);
  });

  it("keeps the instructions a conversation started with when the setting changes", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await cannedAnswers(page, ["Bonjour.", "Oui.", "Encore.", "Hi.", "Toujours."]);
    const setInstructions = async (text: string) => {
      await page.getByRole("button", { name: "Settings" }).click();
      await page.getByLabel("Instructions for new conversations (system prompt)").fill(text);
      await page.getByRole("button", { name: "Close settings" }).click();
    };
    await setInstructions("Answer in French.");
    await ask(page, "Hello?");
    await waitForAnswer(page);
    expect(systemOf(requests[0])).toBe("Answer in French.");

    await setInstructions("Be brief.");
    await page.getByRole("button", { name: "Settings" }).click();
    expect(await page.locator("#system-prompt-conversation").innerText()).toBe(
      "The conversation on screen keeps the instructions it started with: “Answer in French.”",
    );
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "Still there?");
    await waitForAnswer(page);
    expect(systemOf(requests[1])).toBe("Answer in French.");

    await page.reload();
    await page.locator("article.message.user").first().waitFor();
    await ask(page, "And now?");
    await waitForAnswer(page);
    expect(systemOf(requests[2])).toBe("Answer in French.");

    await page.getByRole("button", { name: "New conversation" }).click();
    await ask(page, "Hi.");
    await waitForAnswer(page);
    expect(systemOf(requests[3])).toBe("Be brief.");

    await page.getByRole("button", { name: "Conversations" }).click();
    await page.locator(".history-open", { hasText: "Hello?" }).click();
    await expect.poll(() => answers(page).count()).toBe(3);
    await ask(page, "Again?");
    await waitForAnswer(page);
    expect(systemOf(requests[4])).toBe("Answer in French.");
  });
});

function lastUserContent(request: ChatRequestRecord): unknown {
  const content = request.messages.at(-1)?.content;
  return Array.isArray(content) ? content.at(-1)?.text : content;
}
