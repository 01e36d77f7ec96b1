// What every browser test file sets up: one `qvl serve` for the file, one fresh browser
// context per test, closed after it.
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Browser } from "./browser";
import { openPage } from "./page_driver";
import { startServer, type RunningServer } from "./qvl_server";
import type { ModelFolder } from "./thinking_model";

export interface PageSuite {
  /** The file's server. */
  url(): string;
  /** The current test's browser, once a page is open. */
  browser(): Browser;
  /** A fresh browser at the server (or `url`) for this test. */
  openPage(viewport?: { width: number; height: number }, options?: { touch?: boolean; url?: string }): Promise<Page>;
}

/** Starts `qvl serve` with `extraArgs` before the file's (or the describe's) tests and
 * stops it after them; it serves the folder `model` makes (removed after them), or the
 * tiny fixture model. */
export function pageSuite(extraArgs: string[] = [], model?: () => ModelFolder): PageSuite {
  let server: RunningServer | undefined;
  let folder: ModelFolder | undefined;
  let browser: Browser | null = null;
  beforeAll(async () => {
    folder = model?.();
    server = await startServer(extraArgs, folder?.dir);
  });
  afterAll(async () => {
    await server?.close();
    folder?.remove();
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
