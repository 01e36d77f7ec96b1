// Pictures of the page for the README: `npm run screenshots` writes docs/web-desktop.png
// (light theme), docs/web-phone.png (dark theme, phone width), docs/web-video.png (a
// question about the fixture clip) and docs/web-thinking.png (a Thinking model's
// reasoning opened above its answer, the text read off the image line by line). The
// answers are canned
// (the test model only babbles); everything else is the real page and server.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { openBrowser, PHONE } from "./browser";
import {
  BOXES_ANSWER,
  CANNED_THINKING_USAGE,
  CANNED_TIMINGS,
  CANNED_VIDEO_TIMINGS,
  cannedAnswers,
  slowAnswer,
  TABLE_ANSWER,
  THOUGHT_OCR_ANSWER,
  VIDEO_ANSWER,
} from "./canned";
import {
  ask,
  CLIP_MP4,
  fixtureImage,
  PHOTO,
  pickWithCamera,
  waitForAnswer,
  waitForPageReady,
  type ImageFile,
} from "./page_driver";
import { startServer, TEST_DATA, type RunningServer } from "./qvl_server";

const OUT_DIR = process.env.QVL_SCREENSHOTS_DIR;
const BENCH_IMAGE = resolve(TEST_DATA, "..", "..", "bench", "bench-1024x768.jpg");

function demoImage(): ImageFile {
  return existsSync(BENCH_IMAGE) ? fixtureImage(join("..", "..", "bench", "bench-1024x768.jpg")) : PHOTO();
}

// The id `qvl serve -m Qwen/Qwen3-VL-2B-Instruct` reports; the test model is named "model".
const INSTRUCT = "Qwen/Qwen3-VL-2B-Instruct";
const THINKING = "Qwen/Qwen3-VL-2B-Thinking";
const modelList = (id: string) => ({ object: "list", data: [{ id, object: "model", owned_by: "qvl" }] });
// One event every 150 ms: 96 tokens of reasoning take about 5 s, as on the 2B model.
const THINKING_EVENT_MS = 150;

async function conversation(page: Page): Promise<void> {
  await cannedAnswers(page, [TABLE_ANSWER, BOXES_ANSWER]);
  await pickWithCamera(page, [demoImage()]);
  await ask(page, "Turn the chart in this image into a Markdown table.");
  await waitForAnswer(page);
  await page.getByRole("button", { name: "Find objects" }).click();
  await waitForAnswer(page);
  await page.locator("figure.grounding img").evaluate((img: HTMLImageElement) => img.decode());
  // The question that asked for boxes at the top, its answer below.
  await page
    .locator("article.message.user")
    .last()
    .evaluate((node) => node.scrollIntoView({ block: "start" }));
}

async function videoConversation(page: Page): Promise<void> {
  await cannedAnswers(page, [VIDEO_ANSWER], CANNED_VIDEO_TIMINGS);
  await pickWithCamera(page, [CLIP_MP4()]);
  await page.locator(".attachment .video-poster").waitFor();
  await page.getByRole("button", { name: "Describe what happens" }).click();
  await waitForAnswer(page);
  await page.locator("article.message.assistant .stats summary").click();
  await page.locator("figure.message-video .video-poster").evaluate((img: HTMLImageElement) => img.decode());
  await page
    .locator("article.message.user")
    .last()
    .evaluate((node) => node.scrollIntoView({ block: "start" }));
}

async function thinkingConversation(page: Page): Promise<void> {
  const timings = { ...CANNED_TIMINGS, decode_ms: 11590, total_ms: 14980 };
  await slowAnswer(page, THOUGHT_OCR_ANSWER, THINKING_EVENT_MS, timings, CANNED_THINKING_USAGE);
  await pickWithCamera(page, [demoImage()]);
  await page.locator(".attachment img").waitFor();
  await page.getByRole("button", { name: "Extract text" }).click();
  await waitForAnswer(page, 60_000, THOUGHT_OCR_ANSWER.text);
  await page.locator("details.reasoning summary").click();
  await page.locator("article.message.user img").evaluate((img: HTMLImageElement) => img.decode());
  await page
    .locator("article.message.user")
    .last()
    .evaluate((node) => node.scrollIntoView({ block: "start" }));
}

describe.runIf(OUT_DIR)("screenshots for the README", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const [name, viewport, scheme, model, talk] of [
    ["web-desktop.png", { width: 1280, height: 920 }, "light", INSTRUCT, conversation],
    ["web-phone.png", PHONE, "dark", INSTRUCT, conversation],
    ["web-video.png", { width: 1280, height: 920 }, "light", INSTRUCT, videoConversation],
    ["web-thinking.png", { width: 1280, height: 920 }, "light", THINKING, thinkingConversation],
  ] as const) {
    it(`takes ${name}`, async () => {
      const browser = await openBrowser(viewport, { colorScheme: scheme, touch: viewport === PHONE });
      try {
        const page = browser.context.pages()[0] ?? (await browser.context.newPage());
        await page.route("**/v1/models", (route) => route.fulfill({ json: modelList(model) }));
        await page.goto(server.url);
        await waitForPageReady(page);
        await talk(page);
        await page.locator("#prompt").blur();
        // The "scroll to the latest" button rises in: drawn whole, not half-way.
        await page.evaluate(() => Promise.all(document.getAnimations().map((animation) => animation.finished)));
        await page.screenshot({ path: join(OUT_DIR!, name) });
      } finally {
        await browser.close();
      }
    });
  }
});
