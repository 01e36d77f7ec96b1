// The work before the first token, in a real browser against a real `qvl serve`: the page
// asks for progress reports and the answer's status line shows them. The tiny model
// encodes an image in milliseconds, too fast to see, so the page's fetch holds the
// server's stream back after a report until the test lets the rest through.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { bmpFile } from "./image_files";
import {
  answers,
  ask,
  pickWithCamera,
  recordChatRequests,
  setMaxTokens,
  waitForAnswer,
  waitForPageReady,
} from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();

/** Makes the page's chat requests stop after the first report with the image's encoding
 * under way, until `releaseAnswer()` is called in the page. */
async function holdAfterVisionReport(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const realFetch = window.fetch.bind(window);
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    Object.assign(window, { releaseAnswer: () => release() });
    window.fetch = async (input, init) => {
      const response = await realFetch(input, init);
      if (!String(input).endsWith("/v1/chat/completions") || !response.ok) return response;
      const events = (await response.text()).split("\n\n");
      const held = events.findIndex((event) => {
        const report = event.startsWith("data: {") ? JSON.parse(event.slice(6)).prompt_progress : undefined;
        return report && report.vision > 0 && report.vision < 1;
      });
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          if (held >= 0) {
            controller.enqueue(encoder.encode(events.slice(0, held + 1).join("\n\n") + "\n\n"));
            await released;
          }
          controller.enqueue(encoder.encode(events.slice(held + 1).join("\n\n")));
          controller.close();
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
  });
}

describe("the answer's status line before the first token", () => {
  it("shows how far the server has come encoding the image, then gives way to the answer", async () => {
    const page = await suite.openPage();
    await holdAfterVisionReport(page);
    await page.reload();
    await waitForPageReady(page);
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 8);
    // A picture no other test sends, so the server encodes it rather than reusing it.
    await pickWithCamera(page, [bmpFile("progress.bmp", 72, 40)]);
    await ask(page, "What is in this picture?");

    const answer = answers(page).last();
    const status = answer.locator(".answer-status");
    // The tiny model's vision tower has 4 blocks: a report after each while encoding. The
    // server writes the whole answer before the page sees the report: on a busy machine
    // that takes more than poll's 1 s default.
    await expect.poll(() => status.innerText(), { timeout: 30_000 }).toMatch(/^Looking at the image… (25|50|75)%$/);
    const percent = Number(/(\d+)%/.exec(await status.innerText())![1]);
    const bar = answer.getByRole("progressbar", { name: "Looking at the image…" });
    expect(await bar.evaluate((element) => (element as HTMLProgressElement).value)).toBe(percent);
    expect(await answer.getAttribute("aria-busy")).toBe("true");

    await page.evaluate(() => (window as unknown as { releaseAnswer(): void }).releaseAnswer());
    await waitForAnswer(page);
    expect(await status.isHidden()).toBe(true);
    expect((await answer.locator(".markdown").innerText()).trim().length).toBeGreaterThan(0);
    expect(await answer.locator(".answer-error").isHidden()).toBe(true);
    expect(await answer.locator(".stats summary").innerText()).toMatch(/first token \d/);
    expect(requests).toHaveLength(1);
    expect(requests[0].return_progress).toBe(true);
  });
});
