// What a person does on the page, as test steps: pick images with the camera button,
// paste or drop them, ask, wait for the answer; plus a record of the API requests.
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Page } from "playwright-core";
import { openBrowser, type Browser } from "./browser";
import { TEST_DATA } from "./qvl_server";

export interface ImageFile {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

const MIME_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  gif: "image/gif",
  bmp: "image/bmp",
  mp4: "video/mp4",
};

export function fixtureImage(relativePath: string): ImageFile {
  const name = basename(relativePath);
  const mimeType = MIME_TYPES[name.split(".").pop() ?? ""] ?? "application/octet-stream";
  return { name, mimeType, buffer: readFileSync(join(TEST_DATA, relativePath)) };
}

export interface OpenedPage {
  browser: Browser;
  page: Page;
}

/** A fresh browser at `url`, once the page's script is running; fails on script errors. */
export async function openPage(
  url: string,
  viewport?: { width: number; height: number },
  options: { touch?: boolean } = {},
): Promise<OpenedPage> {
  const browser = await openBrowser(viewport, options);
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(url);
  await waitForPageReady(page);
  if (errors.length > 0) throw new Error(`the page failed to start: ${errors.join("; ")}`);
  return { browser, page };
}

export const PHOTO = () => fixtureImage("tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg");
export const FIRST_PNG = () => fixtureImage("tiny-qwen3vl/cases/03_two_images/images/first.png");
export const SECOND_JPG = () => fixtureImage("tiny-qwen3vl/cases/03_two_images/images/second.jpg");
/** 8 frames at 4 fps (2 s), lossless H.264 RGB. */
export const CLIP_MP4 = () => fixtureImage("tiny-qwen3vl/cases/07_video_frames/frames/clip.mp4");

/** The script has wired up the page once the suggestions it renders are there. */
export async function waitForPageReady(page: Page): Promise<void> {
  await page.locator("#quick-prompts .chip").first().waitFor();
}

export async function pickWithCamera(page: Page, files: ImageFile[]): Promise<void> {
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: /Add images/ }).click();
  await (await chooser).setFiles(files);
}

/** Fires the paste event a browser fires for Ctrl+V with images on the clipboard. */
export async function pasteFiles(page: Page, files: ImageFile[]): Promise<void> {
  const payload = files.map((f) => ({ name: f.name, type: f.mimeType, base64: f.buffer.toString("base64") }));
  await page.locator("#prompt").focus();
  await page.evaluate((items) => {
    const data = new DataTransfer();
    for (const item of items) {
      const bytes = Uint8Array.from(atob(item.base64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], item.name, { type: item.type }));
    }
    document.activeElement?.dispatchEvent(
      new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }),
    );
  }, payload);
}

/** Drags files over the page and drops them, as from a file manager. */
export async function dropFiles(page: Page, files: ImageFile[]): Promise<void> {
  const payload = files.map((f) => ({ name: f.name, type: f.mimeType, base64: f.buffer.toString("base64") }));
  const data = await page.evaluateHandle((items) => {
    const transfer = new DataTransfer();
    for (const item of items) {
      const bytes = Uint8Array.from(atob(item.base64), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], item.name, { type: item.type }));
    }
    return transfer;
  }, payload);
  await page.dispatchEvent(".scroller", "dragenter", { dataTransfer: data });
  await page.locator("#drop-overlay").waitFor({ state: "visible" });
  await page.dispatchEvent(".scroller", "dragover", { dataTransfer: data });
  await page.dispatchEvent(".scroller", "drop", { dataTransfer: data });
}

export async function setMaxTokens(page: Page, tokens: number): Promise<void> {
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByLabel("Longest answer, in tokens").fill(String(tokens));
  await page.getByRole("button", { name: "Close settings" }).click();
}

/** Pastes `text` into the question box with Ctrl+V, as a person pastes a page or a log:
 * `fill` inserts text as typed, one line break at a time, which took 15-30 s for 1,900
 * lines on a busy machine where a paste takes under a second. */
export async function pasteText(page: Page, text: string): Promise<void> {
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.locator("#prompt").focus();
  await page.evaluate((value) => navigator.clipboard.writeText(value), text);
  await page.keyboard.press("ControlOrMeta+V");
}

/** Asks `text`, typed, or `pasted` through the clipboard. */
export async function ask(page: Page, text: string, how: "typed" | "pasted" = "typed"): Promise<void> {
  if (how === "pasted") await pasteText(page, text);
  else await page.locator("#prompt").fill(text);
  // On a touch screen Enter starts a new line: there a person taps Send.
  if (await page.evaluate(() => matchMedia("(pointer: coarse)").matches)) {
    await page.getByRole("button", { name: "Send" }).click();
    return;
  }
  await page.locator("#prompt").press("Enter");
}

export function answers(page: Page) {
  return page.locator("article.message.assistant");
}

/**
 * Waits until every question has its answer and the latest one has finished (done,
 * stopped or failed). The answer appears only after the page has stored the images,
 * so counting answers alone could pick the previous one.
 */
// Waits until every question has a finished answer; with `text`, until the last answer
// reads `text` (a regenerated answer or a resent question replaces one that is already
// finished, so counting alone could return before the new one starts).
export async function waitForAnswer(page: Page, timeout = 60_000, text?: string): Promise<void> {
  await page.waitForFunction(
    (want) => {
      const questions = document.querySelectorAll("article.message.user").length;
      const replies = document.querySelectorAll("article.message.assistant");
      const last = replies[replies.length - 1];
      if (replies.length !== questions || last.getAttribute("aria-busy") !== "false") return false;
      // The answer's own text, not a thinking model's reasoning above it.
      return want === null || (last.querySelector(":scope > .markdown") as HTMLElement | null)?.innerText === want;
    },
    text ?? null,
    { timeout },
  );
}

export interface ChatRequestRecord {
  messages: {
    role: string;
    content: string | { type: string; text?: string; image_url?: { url: string }; video_url?: { url: string } }[];
  }[];
  [field: string]: unknown;
}

/** Collects the JSON bodies of the page's chat requests, in order, with their headers
 * (lower-case names) in `headers`. */
export function recordChatRequests(page: Page): ChatRequestRecord[] & { headers: Record<string, string>[] } {
  const bodies = Object.assign([] as ChatRequestRecord[], { headers: [] as Record<string, string>[] });
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/v1/chat/completions")) {
      bodies.push(request.postDataJSON());
      bodies.headers.push(request.headers());
    }
  });
  return bodies;
}
