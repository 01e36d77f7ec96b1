// What every browser test file sets up: one `qvl serve` for the file, one fresh browser
// context per test, closed after it.
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Browser } from "./browser";
import { openPage } from "./page_driver";
import { startServer, type RunningServer } from "./qvl_server";

export interface PageSuite {
  /** The file's server. */
  url(): string;
  /** The current test's browser, once a page is open. */
  browser(): Browser;
  /** A fresh browser at the server (or `url`) for this test. */
  openPage(viewport?: { width: number; height: number }, options?: { touch?: boolean; url?: string }): Promise<Page>;
}

/** Starts `qvl serve` with `extraArgs` before the file's tests and stops it after them. */
export function pageSuite(extraArgs: string[] = []): PageSuite {
  let server: RunningServer | undefined;
  let browser: Browser | null = null;
  beforeAll(async () => {
    server = await startServer(extraArgs);
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(async () => {
    await browser?.close();
    browser = null;
  });
  return {
    url: () => server!.url,
    browser: () => browser!,
    async openPage(viewport, options = {}) {
      const opened = await openPage(options.url ?? server!.url, viewport, { touch: options.touch });
      browser = opened.browser;
      return opened.page;
    },
  };
}
