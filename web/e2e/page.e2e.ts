// The page in Debian's Chromium against a real `qvl serve` with the tiny fixture model:
// what a person does, from picking an image to stopping an answer and reloading.
import { describe, expect, it } from "vitest";
import { PHONE } from "./browser";
import { BOXES_ANSWER, cannedAnswers } from "./canned";
import {
  answers,
  ask,
  dropFiles,
  FIRST_PNG,
  pasteFiles,
  PHOTO,
  pickWithCamera,
  recordChatRequests,
  SECOND_JPG,
  setMaxTokens,
  waitForAnswer,
} from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();
const openPage = suite.openPage;

/** The server's count of requests cancelled because their client went away. */
async function cancelledRequests(): Promise<number> {
  const metrics = await (await fetch(`${suite.url()}/metrics`)).text();
  const match = /^qvl_requests_total\{outcome="cancelled"\} (\d+)$/m.exec(metrics);
  if (!match) throw new Error(`no cancelled count in /metrics:\n${metrics}`);
  return Number(match[1]);
}

function imageUrlsOf(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.filter((part) => part.type === "image_url").map((part) => part.image_url.url as string);
}

describe("the web page with qvl serve", () => {
  it("asks about an image picked with the camera button and streams the answer", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await pickWithCamera(page, [PHOTO()]);
    await expect.poll(() => page.locator(".attachment img").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Remove image 1 (photo.jpg)" }).count()).toBe(1);

    await setMaxTokens(page, 24);
    await ask(page, "What is in this picture?");
    await waitForAnswer(page);

    const answer = answers(page).last();
    expect((await answer.locator(".markdown").innerText()).trim().length).toBeGreaterThan(0);
    expect(await answer.locator(".answer-error").isHidden()).toBe(true);
    // Speed line: time to first token and the image grid from the server's timings.
    const summary = await answer.locator(".stats summary").innerText();
    expect(summary).toMatch(/first token \d/);
    expect(summary).toMatch(/grid \d+×\d+ \(\d+ tokens\)/);
    expect(await page.locator("article.message.user img").count()).toBe(1);
    expect(await page.locator(".attachment").count()).toBe(0);

    expect(requests).toHaveLength(1);
    const body = requests[0];
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.max_tokens).toBe(24);
    expect(body.messages).toHaveLength(1);
    const content = body.messages[0].content as { type: string; text?: string }[];
    expect(imageUrlsOf(content)[0]).toBe(`data:image/jpeg;base64,${PHOTO().buffer.toString("base64")}`);
    expect(content.at(-1)).toEqual({ type: "text", text: "What is in this picture?" });
  });

  it("takes pasted and dropped images, removes one, and sends a follow-up with the whole history", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 16);
    await pasteFiles(page, [FIRST_PNG()]);
    await dropFiles(page, [SECOND_JPG(), PHOTO()]);
    await expect.poll(() => page.locator(".attachment img").count()).toBe(3);
    expect(
      await page.locator(".attachment img").evaluateAll((imgs) => imgs.map((img) => img.getAttribute("alt"))),
    ).toEqual(["Image 1: first.png", "Image 2: second.jpg", "Image 3: photo.jpg"]);
    expect(await page.locator("#drop-overlay").isHidden()).toBe(true);
    await page.getByRole("button", { name: "Remove image 3 (photo.jpg)" }).click();
    expect(await page.locator(".attachment img").count()).toBe(2);

    await ask(page, "Compare the two charts.");
    await waitForAnswer(page);
    await ask(page, "Which bar is highest?");
    await waitForAnswer(page);

    expect(await answers(page).count()).toBe(2);
    expect(await page.locator("article.message.user").count()).toBe(2);
    expect(requests).toHaveLength(2);
    const [first, followUp] = requests;
    expect(imageUrlsOf(first.messages[0].content)).toHaveLength(2);
    expect(followUp.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(imageUrlsOf(followUp.messages[0].content)).toEqual(imageUrlsOf(first.messages[0].content));
    expect(imageUrlsOf(followUp.messages[0].content)[0]).toMatch(/^data:image\/png;base64,/);
    expect(typeof followUp.messages[1].content === "string" && followUp.messages[1].content.length > 0).toBe(true);
    expect(followUp.messages[2].content).toBe("Which bar is highest?");
    // Both requests name the conversation, for a load balancer to keep it on one server.
    expect(requests.headers[0]["x-session-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(requests.headers[1]["x-session-id"]).toBe(requests.headers[0]["x-session-id"]);
    // The server reused the cached prefix (images included) for the follow-up.
    await answers(page).last().locator(".stats summary").click();
    expect(await answers(page).last().locator(".stats dl").innerText()).toMatch(/Prompt tokens\s+\d+ \(\d+ reused\)/);
  });

  it("stops an answer on the server and can answer again", async () => {
    const page = await openPage();
    const cancelledBefore = await cancelledRequests();
    await setMaxTokens(page, 16000);
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "Describe this image in great detail.");
    const answer = answers(page).last();
    // Some chunks in, so that the page has a speed to show. The real model writes them: on
    // a busy machine that takes more than poll's 1 s default.
    await expect
      .poll(async () => (await answer.locator(".markdown").innerText()).length, { timeout: 30_000 })
      .toBeGreaterThan(40);
    await page.getByRole("button", { name: "Stop the answer" }).click();
    await waitForAnswer(page);
    expect(await answer.locator(".answer-flag").innerText()).toBe("Stopped");
    // The server sends no usage for a stopped answer: the page counted what came.
    const summary = await answer.locator(".stats summary").innerText();
    expect(summary).toMatch(/^first token \d[^·]* · about \d+ tokens · [\d.]+ tok\/s$/);
    await answer.locator(".stats summary").click();
    expect(await answer.locator(".stats dl").innerText()).toMatch(
      /Answer tokens\s+about \d+ \(\d+ characters, counted by the page\)/,
    );
    const stoppedText = await answer.locator(".markdown").innerText();
    await page.waitForTimeout(300);
    expect(await answer.locator(".markdown").innerText()).toBe(stoppedText);
    expect(await page.getByRole("button", { name: "Send" }).isVisible()).toBe(true);
    // Closing the stream made the server cancel the request.
    await expect.poll(cancelledRequests, { timeout: 10_000 }).toBe(cancelledBefore + 1);

    // The server freed the slot: a follow-up is answered.
    await setMaxTokens(page, 8);
    await ask(page, "Thanks. One word?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    expect((await answers(page).last().locator(".markdown").innerText()).trim().length).toBeGreaterThan(0);
  });

  it("keeps conversations and settings across a reload, and starts a new one", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await page.getByRole("button", { name: "Settings" }).click();
    await page.getByRole("radio", { name: /^Low/ }).check();
    await page.getByLabel("Longest answer, in tokens").fill("12");
    await page.getByRole("button", { name: "Close settings" }).click();
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "Remember this picture.");
    await waitForAnswer(page);
    expect(requests[0].max_pixels).toBe(256 * 32 * 32);
    const answerText = await answers(page).last().locator(".markdown").innerText();

    await page.reload();
    await page.locator("article.message.user img").waitFor();
    expect(await answers(page).last().locator(".markdown").innerText()).toBe(answerText);
    await expect
      .poll(() => page.locator("article.message.user img").evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBe(320);
    await page.getByRole("button", { name: "Settings" }).click();
    expect(await page.getByRole("radio", { name: /^Low/ }).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Close settings" }).click();

    await page.getByRole("button", { name: "New conversation" }).click();
    expect(await page.locator("article.message").count()).toBe(0);
    expect(await page.locator("#welcome").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Conversations" }).click();
    const saved = page.locator(".history-open");
    await saved.first().waitFor();
    expect(await saved.count()).toBe(1);
    expect(await saved.first().innerText()).toContain("Remember this picture.");
    await saved.first().click();
    await expect.poll(() => answers(page).count()).toBe(1);
  });

  it("draws grounding boxes from an answer over the image", async () => {
    const page = await openPage();
    await cannedAnswers(page, [BOXES_ANSWER]);
    await pickWithCamera(page, [PHOTO()]);
    await page.getByRole("button", { name: "Find objects" }).click();
    await waitForAnswer(page);
    const figure = answers(page).last().locator("figure.grounding");
    await figure.waitFor();
    expect(await figure.locator(".gbox").count()).toBe(5);
    expect(await figure.locator(".gbox .gmark-label").allInnerTexts()).toEqual([
      "report text",
      "bar chart",
      "stop sign",
      "sun",
      "road sign",
    ]);
    // The JSON the boxes came from is folded away under the answer.
    const fold = answers(page).last().locator("details.coordinates");
    expect(await fold.locator("summary").innerText()).toBe("Coordinates (JSON)");
    expect(await fold.evaluate((node: HTMLDetailsElement) => node.open)).toBe(false);
    const image = figure.locator("img");
    expect(await image.getAttribute("alt")).toBe("Image 1: photo.jpg, with 5 boxes");
    // The first box sits at 4.7% / 6.6% of the drawn image.
    const imageBox = (await image.boundingBox())!;
    const firstBox = (await figure.locator(".gbox").first().boundingBox())!;
    expect(Math.abs(firstBox.x - (imageBox.x + 0.047 * imageBox.width))).toBeLessThan(2);
    expect(Math.abs(firstBox.y - (imageBox.y + 0.066 * imageBox.height))).toBeLessThan(2);
    expect(Math.abs(firstBox.width - 0.507 * imageBox.width)).toBeLessThan(2);

    await figure.locator(".gbox").nth(3).hover();
    expect(await figure.locator(".gbox.is-active").count()).toBe(1);
    await figure.getByRole("button", { name: "stop sign" }).click();
    expect(await figure.locator(".gbox:visible").count()).toBe(4);
    await figure.getByRole("button", { name: "Hide boxes" }).click();
    expect(await figure.locator(".gbox:visible").count()).toBe(0);
  });

  it("works at phone width with the keyboard rules of a chat box", async () => {
    const page = await openPage(PHONE);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth).toBeLessThanOrEqual(PHONE.width);
    await page.locator("#prompt").fill("line one");
    await page.locator("#prompt").press("Shift+Enter");
    await page.locator("#prompt").pressSequentially("line two");
    expect(await page.locator("#prompt").inputValue()).toBe("line one\nline two");
    expect(await page.locator("article.message").count()).toBe(0);
    await page.locator("#prompt").fill("");
    await page.locator("#prompt").press("Enter");
    expect(await page.locator("#composer-note").innerText()).toBe("Type a question or add an image first.");
  });
});
