// How a conversation survives what goes wrong in it: a question the server refuses, a
// picture the model cannot take, a reload in the middle of an answer; and the length of
// answers left to the server unless the settings choose one.
import type { Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PHONE } from "./browser";
import {
  answers,
  ask,
  fixtureImage,
  PHOTO,
  pickWithCamera,
  recordChatRequests,
  setMaxTokens,
  waitForAnswer,
  type ImageFile,
} from "./page_driver";
import { startServer, type RunningServer } from "./qvl_server";
import { pageSuite } from "./suite";

// A short default answer keeps the test that leaves the length to the server quick.
const SERVER_MAX_TOKENS = 48;

const suite = pageSuite(["--max-tokens", String(SERVER_MAX_TOKENS)]);
const openPage = suite.openPage;

const SVG = {
  name: "drawing.svg",
  mimeType: "image/svg+xml",
  buffer: Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="120" height="80" fill="#36c"/></svg>',
  ),
};

/** The text parts of a request's user messages, in order. */
function questionsOf(body: { messages: { role: string; content: unknown }[] }): string[] {
  return body.messages
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : ((message.content as { type: string; text?: string }[]).find((part) => part.type === "text")?.text ?? ""),
    );
}

describe("a conversation when something goes wrong", () => {
  it("says when the server cannot be reached, and clears that once it answers again", async () => {
    const page = await openPage();
    const note = page.locator("#composer-note");
    await page.route("**/v1/models", (route) => route.abort("connectionrefused"));
    // The browser says the network changed: the page asks the server again at once.
    await page.evaluate(() => window.dispatchEvent(new Event("online")));
    await expect.poll(() => note.innerText()).toMatch(/^Cannot reach the qvl server/);
    expect(await note.getAttribute("role")).toBe("status");
    await page.unroute("**/v1/models");
    await page.evaluate(() => window.dispatchEvent(new Event("online")));
    await expect.poll(() => note.innerText()).toBe("");
  });

  it("when a question cannot reach the server, says so under the question box until it answers again", async () => {
    const page = await openPage();
    const note = page.locator("#composer-note");
    await setMaxTokens(page, 4);
    // The server has stopped: nothing on its port answers.
    await page.route("**/v1/**", (route) => route.abort("connectionrefused"));
    await ask(page, "Are you there?");
    await waitForAnswer(page);
    const failure = answers(page).last().locator(".answer-error");
    expect(await failure.locator("strong").innerText()).toBe(
      "Cannot reach the qvl server. Check that it is still running.",
    );
    // Not the browser's "Failed to fetch".
    expect(await failure.locator(".answer-error-detail").count()).toBe(0);
    await expect.poll(() => note.innerText()).toMatch(/^Cannot reach the qvl server: .* Trying again…$/);

    await page.unroute("**/v1/**");
    await page.evaluate(() => window.dispatchEvent(new Event("online")));
    await expect.poll(() => note.innerText()).toBe("");
    await failure.getByRole("button", { name: "Try again" }).click();
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
  });

  it("leaves a question the server refused out of the follow-ups", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    // The first request is refused as the server refuses a malformed one.
    let refused = false;
    await page.route("**/v1/chat/completions", async (route: Route) => {
      if (refused) return route.continue();
      refused = true;
      await route.fulfill({
        status: 400,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ error: { message: "messages[0] is not usable", type: "invalid_request_error" } }),
      });
    });
    await setMaxTokens(page, 8);
    await ask(page, "A question the server refuses.");
    await waitForAnswer(page);
    const refusal = answers(page).last().locator(".answer-error");
    expect(await refusal.locator("strong").innerText()).toBe("The server could not use this request.");
    // Asking the same again would get the same answer.
    expect(await refusal.getByRole("button", { name: "Try again" }).count()).toBe(0);
    expect(await refusal.innerText()).toMatch(/left out of the conversation/);

    await ask(page, "Another question.");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    expect(questionsOf(requests[1])).toEqual(["Another question."]);
  });

  it("asks a busy server again after the time it names, and says that it waits", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    let busy = true;
    // qvl serve's answer while its queue is full.
    await page.route("**/v1/chat/completions", (route: Route) => {
      if (!busy) return route.continue();
      busy = false;
      return route.fulfill({
        status: 503,
        headers: { "Retry-After": "2" },
        json: { error: { message: "the server is busy: 64 requests are waiting", type: "server_error" } },
      });
    });
    await setMaxTokens(page, 4);
    await ask(page, "Are you free?");
    const answer = answers(page).last();
    await expect
      .poll(() => answer.locator(".answer-status").innerText())
      .toBe("The server is busy: asking again in 2 s…");
    await waitForAnswer(page);
    expect(await answer.locator(".answer-error").isHidden()).toBe(true);
    expect((await answer.locator(".markdown").innerText()).length).toBeGreaterThan(0);
    expect(requests).toHaveLength(2);
  });

  it("says when the conversation no longer fits the context, and offers a new one", async () => {
    const page = await openPage();
    const message = "the prompt is 17000 tokens, over the context of 16384 tokens";
    // qvl serve's answer to a prompt over --ctx-size, as OpenAI's API words it.
    await page.route("**/v1/chat/completions", (route: Route) =>
      route.fulfill({
        status: 400,
        json: { error: { message, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } },
      }),
    );
    await ask(page, "One more question.");
    await waitForAnswer(page);
    const refusal = answers(page).last().locator(".answer-error");
    expect(await refusal.locator("strong").innerText()).toBe(
      "The conversation is too long for the model: it no longer fits in the server's context. Start a new conversation, or ask something shorter.",
    );
    expect(await refusal.locator(".answer-error-detail").first().innerText()).toBe(message);
    await refusal.getByRole("button", { name: "New conversation" }).click();
    expect(await page.locator("article.message").count()).toBe(0);
    expect(await page.locator("#welcome").isVisible()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("prompt");
  });

  it("refuses a picture the model cannot take before sending it, and converts an SVG", async () => {
    const page = await openPage();
    await pickWithCamera(page, [fixtureImage("images/limits/1x10000.png")]);
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe(
        '"1x10000.png" is 1 x 10000 pixels: the model needs at least 32 pixels on each side. Use a larger picture.',
      );
    expect(await page.locator("#attachments .attachment").count()).toBe(0);

    const requests = recordChatRequests(page);
    await setMaxTokens(page, 4);
    await pickWithCamera(page, [SVG]);
    await page.locator("#attachments img").waitFor();
    await ask(page, "What color is it?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    const parts = requests[0].messages[0].content as { type: string; image_url?: { url: string } }[];
    expect(parts[0].image_url?.url).toMatch(/^data:image\/jpeg;base64,/);
  });

  it("keeps what a streaming answer had said when the page is reloaded", async () => {
    const page = await openPage();
    await setMaxTokens(page, 16000);
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "Describe this image in great detail.");
    const answer = answers(page).last();
    // Past the page's first save while streaming.
    // The real model writes them: on a busy machine that takes more than poll's 1 s default.
    await expect
      .poll(async () => (await answer.locator(".markdown").innerText()).length, { timeout: 30_000 })
      .toBeGreaterThan(40);
    await page.waitForTimeout(2500);
    expect(await page.getByRole("button", { name: "Stop the answer" }).isVisible()).toBe(true);
    await page.reload();
    const kept = answers(page).last();
    await kept.locator(".answer-flag").waitFor();
    expect(await kept.locator(".answer-flag").innerText()).toBe("Stopped");
    expect((await kept.locator(".markdown").innerText()).length).toBeGreaterThan(40);
  });

  it("leaves the answer's length to the server until the settings choose one", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await page.getByRole("button", { name: "Settings" }).click();
    const box = page.getByLabel("Longest answer, in tokens");
    expect(await box.inputValue()).toBe("");
    // The page asks /props as it opens; until the answer comes the box names the page's own default.
    await expect.poll(() => box.getAttribute("placeholder")).toBe(`Server default (${SERVER_MAX_TOKENS})`);
    await box.fill("99999");
    await box.blur();
    expect(await box.inputValue()).toBe("16384");
    await box.fill("6");
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "One.");
    await waitForAnswer(page);
    expect(requests[0].max_tokens).toBe(6);

    await page.getByRole("button", { name: "Settings" }).click();
    await box.fill("");
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "Two.");
    await waitForAnswer(page);
    expect("max_tokens" in requests[1]).toBe(false);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
  });

  it("types a new line with Enter on a touch screen, and sends with the button", async () => {
    const page = await openPage(PHONE, { touch: true });
    await page.locator("#prompt").fill("line one");
    await page.locator("#prompt").press("Enter");
    await page.locator("#prompt").pressSequentially("line two");
    expect(await page.locator("#prompt").inputValue()).toBe("line one\nline two");
    expect(await page.locator("article.message").count()).toBe(0);
  });
});

describe("a server with a lower limit on a request's size", () => {
  let small: RunningServer;
  beforeAll(async () => {
    small = await startServer(["--max-body-mb", "1", "--max-tokens", "4", "--ctx-size", "4096"]);
  });
  afterAll(async () => {
    await small?.close();
  });

  /** The fixture photo made `bytes` long by comment segments after its start: still a JPEG. */
  const paddedPhoto = (name: string, bytes: number): ImageFile => {
    const photo = PHOTO().buffer;
    const segments: Buffer[] = [];
    for (let left = bytes - photo.length; left > 0;) {
      const size = Math.min(left, 60_000);
      const segment = Buffer.alloc(size, 0x20);
      segment.writeUInt16BE(0xfffe, 0);
      segment.writeUInt16BE(size - 2, 2);
      segments.push(segment);
      left -= size;
    }
    return {
      name,
      mimeType: "image/jpeg",
      buffer: Buffer.concat([photo.subarray(0, 2), ...segments, photo.subarray(2)]),
    };
  };

  it("refuses a picture the request could not carry as base64 when it is attached, naming the limit", async () => {
    const page = await openPage(undefined, { url: small.url });
    const requests = recordChatRequests(page);
    // The page has the server's /props once the answer length follows its context.
    await expect.poll(() => page.locator("#max-tokens").getAttribute("max")).toBe("4096");
    const note = page.locator("#composer-note");
    // 900 KB, under the limit as a file; 1.2 MB as the request carries it.
    await pickWithCamera(page, [paddedPhoto("scan.jpg", 900_000)]);
    await expect
      .poll(() => note.innerText())
      .toBe(
        '"scan.jpg" is too large for this server: sent, it takes 1.1 MB (files grow by a third as text), over the ' +
          "server's limit of 1.0 MB per request. Use a smaller picture; the server's operator can raise the limit with --max-body-mb.",
      );
    expect(await page.locator("#attachments .attachment").count()).toBe(0);

    // One that fits is sent and answered; the next would not fit beside it.
    await pickWithCamera(page, [paddedPhoto("first.jpg", 600_000)]);
    await page.locator("#attachments img").waitFor();
    expect(await note.innerText()).toBe("");
    await ask(page, "What is it?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    await pickWithCamera(page, [paddedPhoto("second.jpg", 600_000)]);
    await expect
      .poll(() => note.innerText())
      .toMatch(/^"second.jpg" would make the request 1.5 MB, .* Start a new conversation/);
    expect(await page.locator("#attachments .attachment").count()).toBe(0);
    expect(requests).toHaveLength(1);
  });
});
