// Debian's Chromium driven by playwright-core (no browser download): every launch gets
// a fresh profile directory, so storage never leaks between tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

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

export async function launchBrowser(
  viewport = DESKTOP,
  options: { colorScheme?: "light" | "dark"; touch?: boolean } = {},
): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "qvl-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
    colorScheme: options.colorScheme ?? "light",
    hasTouch: options.touch ?? false,
    isMobile: options.touch ?? false,
    deviceScaleFactor: 1,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
