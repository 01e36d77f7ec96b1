// Videos on the page with a real `qvl serve` (FFmpeg decodes the clip, the tiny model
// answers): attach by button and by drop, the video suggestions, the sampled frame count
// from the server's timings, follow-ups that resend the clip, a reload, and the
// refusals for files too large for the page and for the server.
import type { Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answers,
  ask,
  CLIP_MP4,
  dropFiles,
  PHOTO,
  pickWithCamera,
  recordChatRequests,
  setMaxTokens,
  waitForAnswer,
  waitForPageReady,
  type ImageFile,
} from "./page_driver";
import { startServer, type RunningServer } from "./qvl_server";
import { pageSuite } from "./suite";

const suite = pageSuite();
const openPage = suite.openPage;

interface VideoTimingJson {
  frames: number;
  sampled_frames: number;
  tokens: number;
  cached: boolean;
}

/** The `timings.videos` of each chat answer, read from its event stream. */
function recordVideoTimings(page: Page): VideoTimingJson[][] {
  const all: VideoTimingJson[][] = [];
  page.on("response", (response: Response) => {
    if (!response.url().endsWith("/v1/chat/completions")) return;
    const index = all.length;
    all.push([]);
    // A body the browser dropped before it was read (the page reloaded or closed) has no
    // timings; the assertions that need one poll for it, so a missing one still fails them.
    response.text().then(
      (text) => {
        for (const line of text.split("\n")) {
          if (!line.startsWith("data: {")) continue;
          const videos = JSON.parse(line.slice(6)).timings?.videos;
          if (videos) all[index] = videos;
        }
      },
      () => undefined,
    );
  });
  return all;
}

function videoUrlsOf(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.filter((part) => part.type === "video_url").map((part) => part.video_url.url as string);
}

function clipDataUrl(): string {
  return `data:video/mp4;base64,${CLIP_MP4().buffer.toString("base64")}`;
}

describe("videos on the web page", () => {
  it("sends a clip picked with the button, shows its sampled frames, and resends it for follow-ups", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    const timings = recordVideoTimings(page);
    await setMaxTokens(page, 12);
    await pickWithCamera(page, [CLIP_MP4()]);
    const chip = page.locator(".attachment.is-video");
    await chip.waitFor();
    expect(await chip.locator(".video-thumb").getAttribute("aria-label")).toBe("Video 1: clip.mp4");
    expect(await page.getByRole("button", { name: "Remove video 1 (clip.mp4)" }).count()).toBe(1);
    // The browser read the clip's length (2 s) from the file.
    expect(await chip.locator(".video-duration").innerText()).toBe("0:02");
    // The suggestions are the video's.
    expect(await page.locator("#quick-prompts .chip").allInnerTexts()).toContain("Describe what happens");

    await ask(page, "What moves in this video?");
    await waitForAnswer(page);
    const answer = answers(page).last();
    expect(await answer.locator(".answer-error").isHidden()).toBe(true);
    expect((await answer.locator(".markdown").innerText()).trim().length).toBeGreaterThan(0);

    expect(requests).toHaveLength(1);
    const content = requests[0].messages[0].content;
    expect(videoUrlsOf(content)).toEqual([clipDataUrl()]);
    expect(Array.isArray(content) && content.at(-1)).toEqual({ type: "text", text: "What moves in this video?" });

    // 8 frames at 4 fps sampled at 2 fps: the count the server reports is on the page.
    await expect.poll(() => timings[0]?.length).toBe(1);
    const [clip] = timings[0];
    expect(clip.frames).toBe(8);
    expect(clip.sampled_frames).toBeGreaterThan(0);
    const summary = await answer.locator(".stats summary").innerText();
    expect(summary).toContain(`${clip.sampled_frames} video frames (${clip.tokens} tokens)`);
    await answer.locator(".stats summary").click();
    expect(await answer.locator(".stats dl").innerText()).toMatch(
      new RegExp(`Video 1\\s+${clip.sampled_frames} of 8 frames at 4 fps sampled, 320×240 → \\d+×\\d+, grid`),
    );
    const message = page.locator("article.message.user figure.message-video");
    expect(await message.locator(".video-facts").innerText()).toBe(
      `${clip.sampled_frames} frames sampled, ${clip.tokens} tokens`,
    );
    expect(await message.locator(".video-name").innerText()).toBe("clip.mp4 · 0:02 · 78 KB");
    // The server's facts on a line of their own under the file's.
    const name = (await message.locator(".video-name").boundingBox())!;
    expect((await message.locator(".video-facts").boundingBox())!.y).toBeGreaterThanOrEqual(name.y + name.height);
    // The clip plays in the lightbox.
    await page.getByRole("button", { name: "Play video 1 (clip.mp4)" }).click();
    const player = page.locator("#lightbox-video");
    await expect.poll(() => player.evaluate((video: HTMLVideoElement) => video.readyState)).toBeGreaterThan(0);
    expect(await page.locator("#lightbox-caption").innerText()).toBe("Video 1: clip.mp4");
    expect(await page.locator("#lightbox-image").isHidden()).toBe(true);
    await page.getByRole("button", { name: "Close the video" }).click();
    expect(await page.locator("#lightbox").isHidden()).toBe(true);

    // A follow-up sends the clip again, and the server reuses what it computed for it.
    await ask(page, "And then?");
    await waitForAnswer(page);
    expect(requests).toHaveLength(2);
    expect(requests[1].messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(videoUrlsOf(requests[1].messages[0].content)).toEqual([clipDataUrl()]);
    await expect.poll(() => timings[1]?.[0]?.cached).toBe(true);
    const followUp = answers(page).last();
    expect(await followUp.locator(".stats summary").innerText()).toMatch(/^video cached · /);
    await followUp.locator(".stats summary").click();
    expect(await followUp.locator(".stats dl").innerText()).toMatch(/Prompt tokens\s+\d+ \(\d+ reused\)/);

    // The clip is kept in the browser: after a reload the conversation goes on.
    await page.reload();
    await page.locator("article.message.user figure.message-video").first().waitFor();
    expect(await page.locator("figure.message-video .video-facts").first().innerText()).toBe(
      `${clip.sampled_frames} frames sampled, ${clip.tokens} tokens`,
    );
    expect(await page.locator("#quick-prompts .chip").first().innerText()).toBe("Describe what happens");
    await ask(page, "One more?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    expect(videoUrlsOf(requests[2].messages[0].content)).toEqual([clipDataUrl()]);
  });

  it("takes a dropped clip beside an image and fills in the blank of a video suggestion", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 8);
    await dropFiles(page, [PHOTO(), CLIP_MP4()]);
    await expect.poll(() => page.locator(".attachment").count()).toBe(2);
    expect(await page.locator("#drop-overlay").isHidden()).toBe(true);
    await page.getByRole("button", { name: "When does … happen?" }).click();
    // Not sent yet: the blank is selected for the person's words.
    expect(requests).toHaveLength(0);
    expect(await page.locator("#composer-note").innerText()).toMatch(/in place of "…"/);
    await page.keyboard.press("Enter");
    expect(requests).toHaveLength(0);
    await page.locator("#prompt").pressSequentially("the square turn");
    expect(await page.locator("#prompt").inputValue()).toBe(
      "When does the square turn happen in this video? Answer with the time in seconds.",
    );
    await page.locator("#prompt").press("Enter");
    await waitForAnswer(page);
    expect(requests).toHaveLength(1);
    const content = requests[0].messages[0].content as { type: string }[];
    expect(content.map((part) => part.type)).toEqual(["image_url", "video_url", "text"]);
    // The conversation now has a video: the suggestions stay the video's.
    expect(await page.locator("#quick-prompts .chip").first().innerText()).toBe("Describe what happens");
    expect(await answers(page).last().locator(".stats summary").innerText()).toMatch(/\d+ video frames \(\d+ tokens\)/);
  });

  it("says so when a saved conversation lost its video, instead of sending without it", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 4);
    await pickWithCamera(page, [CLIP_MP4()]);
    await page.locator(".attachment.is-video").waitFor();
    await ask(page, "What is it?");
    await waitForAnswer(page);
    // The browser cleared the stored clip (as it may when short of space).
    await page.evaluate(
      () =>
        new Promise<void>((resolve, reject) => {
          const open = indexedDB.open("qvl");
          open.onsuccess = () => {
            const transaction = open.result.transaction("videos", "readwrite");
            transaction.objectStore("videos").clear();
            transaction.oncomplete = () => resolve();
            transaction.onerror = () => reject(transaction.error);
          };
        }),
    );
    await page.reload();
    const missing = page.locator("figure.message-video .video-missing");
    await missing.waitFor();
    expect(await missing.innerText()).toBe(
      "This video is no longer stored in this browser: questions about it cannot be sent again. Start a new conversation with the file.",
    );
    expect(await page.getByRole("button", { name: "Play video 1 (clip.mp4)" }).isDisabled()).toBe(true);
    await ask(page, "And now?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error strong").innerText()).toMatch(
      /^A video of this conversation is no longer stored in this browser/,
    );
    expect(requests).toHaveLength(1);
  });

  it("refuses a video over the server's size limit before sending it", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await page.locator("#prompt").focus();
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(257 * 1024 * 1024)], "huge.mp4", { type: "video/mp4" }));
      document.activeElement?.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true }));
    });
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe('"huge.mp4" is 257 MB, over the server\'s limit of 256 MB per video. Trim or compress it first.');
    expect(await page.locator(".attachment").count()).toBe(0);
    expect(requests).toHaveLength(0);
  });
});

describe("a server with a lower video limit", () => {
  let small: RunningServer;
  beforeAll(async () => {
    small = await startServer(["--max-video-mb", "1", "--max-images", "1", "--ctx-size", "4096"]);
  });
  afterAll(async () => {
    await small?.close();
  });

  // The clip with padding after its last box: still a valid MP4, 1.2 MB.
  const padded = (): ImageFile => ({
    name: "long.mp4",
    mimeType: "video/mp4",
    buffer: Buffer.concat([CLIP_MP4().buffer, Buffer.alloc(1_200_000 - CLIP_MP4().buffer.length)]),
  });

  it("refuses a video over the server's own limit before sending it, naming that limit", async () => {
    const page = await openPage(undefined, { url: small.url });
    const requests = recordChatRequests(page);
    // The page has the server's /props once the answer length follows its context.
    await expect.poll(() => page.locator("#max-tokens").getAttribute("max")).toBe("4096");
    await pickWithCamera(page, [padded()]);
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe('"long.mp4" is 1.1 MB, over the server\'s limit of 1.0 MB per video. Trim or compress it first.');
    expect(await page.locator(".attachment").count()).toBe(0);
    // Its image limit too: a request carries the whole conversation.
    await pickWithCamera(page, [PHOTO(), PHOTO()]);
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe(
        "At most 1 image per conversation (the server's limit for a request, which carries the whole conversation). Start a new conversation for more.",
      );
    expect(await page.locator(".attachment").count()).toBe(1);
    expect(requests).toHaveLength(0);
  });

  it("without the server's /props, names the file the server refused as too large", async () => {
    const page = await openPage(undefined, { url: small.url });
    // An older server, or a proxy that passes only the API: the page assumes the defaults.
    await page.route("**/props", (route) => route.fulfill({ status: 404, body: "" }));
    await page.reload();
    await waitForPageReady(page);
    await pickWithCamera(page, [padded()]);
    await page.locator(".attachment.is-video").waitFor();
    expect(await page.locator("#composer-note").innerText()).toBe("");
    await ask(page, "What happens?");
    await waitForAnswer(page);
    const error = answers(page).last().locator(".answer-error");
    expect(await error.locator("strong").innerText()).toBe(
      'The video "long.mp4" (1.1 MB) is too large for this server. Trim or compress it; the server\'s operator can raise the limit.',
    );
    // The server's words first, then the note that the question is left out from now on.
    expect(await error.locator(".answer-error-detail").first().innerText()).toMatch(
      /the video is 1.1 MiB, over the limit of 1 MiB per video/,
    );
  });
});
