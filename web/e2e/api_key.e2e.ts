// A server started with --api-key: the page asks for the key as soon as it loads (its
// model list is refused), takes it, and then answers.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DESKTOP, type Browser } from "./browser";
import { answers, ask, openPage, PHOTO, pickWithCamera, recordChatRequests, waitForAnswer } from "./page_driver";
import { EXTERNAL_SERVER, startServer, type RunningServer } from "./qvl_server";

const KEY = "e2e-secret-key";

describe.skipIf(EXTERNAL_SERVER)("the web page with a server that needs an API key", () => {
  let server: RunningServer;
  let browser: Browser | null = null;

  beforeAll(async () => {
    server = await startServer(["--api-key", KEY]);
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(async () => {
    await browser?.close();
    browser = null;
  });

  it("asks for the key at load, says when one is refused, and connects with the right one", async () => {
    const opened = await openPage(server.url);
    browser = opened.browser;
    const page = opened.page;
    const requests = recordChatRequests(page);

    const dialog = page.getByRole("dialog", { name: "Settings" });
    await dialog.waitFor();
    const status = page.locator("#api-key-status");
    expect(await status.innerText()).toMatch(/^This server needs an API key\. Enter it here/);
    expect(await status.getAttribute("role")).toBe("alert");
    // In view without scrolling, below the field.
    const statusBox = (await status.boundingBox())!;
    expect(statusBox.y + statusBox.height).toBeLessThanOrEqual(DESKTOP.height);
    expect(statusBox.y).toBeGreaterThan((await page.getByLabel("API key").boundingBox())!.y);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key");
    expect(await page.locator("#model-name").innerText()).toBe("");

    await page.getByLabel("API key").fill("wrong-key");
    await expect.poll(() => status.innerText()).toMatch(/^The server did not accept this API key/);
    expect(await dialog.isVisible()).toBe(true);

    await page.getByLabel("API key").fill(KEY);
    await dialog.waitFor({ state: "hidden" });
    expect(await page.locator("#model-name").innerText()).toBe("model");
    expect(await page.locator("#composer-note").innerText()).toBe("The server accepted the API key.");

    await page.getByRole("button", { name: "Settings" }).click();
    await page.getByLabel("Longest answer, in tokens").fill("8");
    expect(await status.isHidden()).toBe(true);
    await page.getByRole("button", { name: "Close settings" }).click();
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "What is this?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    expect(requests.headers[0].authorization).toBe(`Bearer ${KEY}`);
  });

  it("asks again when the key stops working between load and send", async () => {
    const opened = await openPage(server.url);
    browser = opened.browser;
    const page = opened.page;
    await page.getByLabel("API key").fill(KEY);
    await page.getByRole("dialog", { name: "Settings" }).waitFor({ state: "hidden" });
    // As if the server had been restarted with another key.
    await page.route("**/v1/chat/completions", (route) =>
      route.fulfill({ status: 401, json: { error: { message: "invalid API key", code: "invalid_api_key" } } }),
    );
    await ask(page, "Hello?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error strong").innerText()).toMatch(/needs an API key/);
    await page.getByRole("dialog", { name: "Settings" }).waitFor();
    expect(await page.locator("#api-key-status").innerText()).toMatch(/did not accept this API key/);
  });
});
