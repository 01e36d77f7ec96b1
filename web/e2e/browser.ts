// Debian's Chromium driven by playwright-core (no browser download). One Chromium per
// test file, closed after it; every test gets a fresh context of it, so storage never
// leaks between tests (a Chromium per test cost more than a second each).
import { chromium, type Browser as Chromium, type BrowserContext } from "playwright-core";
import { afterAll } from "vitest";

export const CHROMIUM = process.env.QVL_CHROMIUM ?? "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

let chromiumProcess: Promise<Chromium> | null = null;

afterAll(async () => {
  const running = chromiumProcess;
  chromiumProcess = null;
  await (await running)?.close();
});

/** A fresh browser context (its own storage, cookies and permissions) at `viewport`. */
export async function openBrowser(
  viewport = DESKTOP,
  options: { colorScheme?: "light" | "dark"; touch?: boolean } = {},
): Promise<Browser> {
  chromiumProcess ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const running = await chromiumProcess;
  const context = await running.newContext({
    viewport,
    colorScheme: options.colorScheme ?? "light",
    hasTouch: options.touch ?? false,
    isMobile: options.touch ?? false,
    deviceScaleFactor: 1,
  });
  return { context, close: () => context.close() };
}
