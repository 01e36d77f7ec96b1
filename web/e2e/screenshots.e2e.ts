// Pictures of the page for the README: `npm run screenshots` writes docs/web-desktop.png
// (light theme), docs/web-phone.png (dark theme, phone width) and docs/web-video.png (a
// question about the fixture clip). The answers are canned
// (the test model only babbles); everything else is the real page and server.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { launchBrowser, PHONE } from "./browser";
import { BOXES_ANSWER, CANNED_VIDEO_TIMINGS, cannedAnswers, TABLE_ANSWER, VIDEO_ANSWER } from "./canned";
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
const MODEL_LIST = { object: "list", data: [{ id: "Qwen/Qwen3-VL-2B-Instruct", object: "model", owned_by: "qvl" }] };

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

describe.runIf(OUT_DIR)("screenshots for the README", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const [name, viewport, scheme, talk] of [
    ["web-desktop.png", { width: 1280, height: 920 }, "light", conversation],
    ["web-phone.png", PHONE, "dark", conversation],
    ["web-video.png", { width: 1280, height: 920 }, "light", videoConversation],
  ] as const) {
    it(`takes ${name}`, async () => {
      const browser = await launchBrowser(viewport, { colorScheme: scheme, touch: viewport === PHONE });
      try {
        const page = browser.context.pages()[0] ?? (await browser.context.newPage());
        await page.route("**/v1/models", (route) => route.fulfill({ json: MODEL_LIST }));
        await page.goto(server.url);
        await waitForPageReady(page);
        await talk(page);
        await page.locator("#prompt").blur();
        await page.screenshot({ path: join(OUT_DIR!, name) });
      } finally {
        await browser.close();
      }
    });
  }
});
