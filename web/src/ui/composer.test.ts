// @vitest-environment jsdom
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { partBytes, questionBytes } from "../api/request_size";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { Composer, WAIT_FOR_THE_ANSWER, type ComposerHandlers } from "./composer";

const PAGE = readFileSync(resolve(__dirname, "../../index.html"), "utf8");

function composer(stop = () => {}, overrides: Partial<ComposerHandlers> = {}): Composer {
  return new Composer({
    send: () => {},
    stop,
    openImage: () => {},
    latestMedia: () => undefined,
    imageCount: () => 0,
    videoCount: () => 0,
    limits: () => DEFAULT_SERVER_LIMITS,
    requestBytes: async () => 0,
    sendProblem: () => undefined,
    ...overrides,
  });
}

const byId = (id: string) => document.getElementById(id)!;

function pressEnterIn(id: string): void {
  byId(id).dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
}

describe("the composer", () => {
  beforeEach(() => {
    // jsdom lays nothing out.
    globalThis.ResizeObserver ??= class {
      observe(): void {}
      unobserve(): void {}
      disconnect(): void {}
    };
    document.documentElement.innerHTML = new DOMParser().parseFromString(PAGE, "text/html").documentElement.innerHTML;
  });

  it("gives focus back to the question box when the focused stop button goes away", () => {
    const box = composer();
    box.setBusy(true);
    byId("stop-button").focus();
    expect(document.activeElement?.id).toBe("stop-button");
    box.setBusy(false);
    expect(document.activeElement?.id).toBe("prompt");
  });

  it("clears the note asking to wait once the answer is over", () => {
    const box = composer();
    box.setBusy(true);
    (byId("prompt") as HTMLTextAreaElement).value = "Next question";
    pressEnterIn("prompt");
    expect(byId("composer-note").textContent).toBe(WAIT_FOR_THE_ANSWER);
    box.setBusy(false);
    expect(byId("composer-note").textContent).toBe("");
    box.showNote("Something else.");
    box.setBusy(false);
    expect(byId("composer-note").textContent).toBe("Something else.");
  });

  it("stops the answer on Escape, unless a dialog is open to take it", () => {
    const stop = vi.fn();
    const box = composer(stop);
    const escape = () => document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", cancelable: true }));
    escape();
    expect(stop).not.toHaveBeenCalled();
    box.setBusy(true);
    escape();
    expect(stop).toHaveBeenCalledTimes(1);
    byId("settings-dialog").setAttribute("open", "");
    escape();
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it("shows a placeholder for each file while it is read", async () => {
    const list = byId("attachments");
    const box = composer();
    const done = box.addFiles([new File(["not an image"], "a.png", { type: "image/png" })]);
    expect(list.querySelectorAll(".is-preparing")).toHaveLength(1);
    expect(list.hidden).toBe(false);
    await done;
    expect(list.querySelectorAll(".is-preparing")).toHaveLength(0);
    expect(list.hidden).toBe(true);
    expect(byId("composer-note").textContent).toContain('"a.png" is not an image this browser can read.');
  });

  describe("with a server's limit on a request's size", () => {
    // jsdom decodes no image: every file reads as a 64 x 64 picture.
    beforeEach(() => {
      vi.stubGlobal("createImageBitmap", async () => ({ width: 64, height: 64, close: () => {} }));
      URL.createObjectURL = () => "blob:thumbnail";
      URL.revokeObjectURL = () => {};
    });
    afterEach(() => vi.unstubAllGlobals());

    const png = (name: string, bytes: number) => new File([new Uint8Array(bytes)], name, { type: "image/png" });
    const attached = () => [...byId("attachments").querySelectorAll("img")].map((img) => img.alt);
    // Room for a question and one 600-byte picture in the request, not two.
    const limits = { ...DEFAULT_SERVER_LIMITS, bodyBytes: questionBytes("") + partBytes("image/png", 600) + 100 };

    it("refuses a file that would make the request too large, beside the conversation's files", async () => {
      let conversation = 0;
      const box = composer(undefined, { limits: () => limits, requestBytes: async () => conversation });
      await box.addFiles([png("a.png", 600), png("b.png", 600)]);
      expect(attached()).toEqual(["Image 1: a.png"]);
      expect(byId("composer-note").textContent).toMatch(/^"b.png" would make the request .*Start a new conversation/);
      expect(byId("composer-note").classList.contains("is-error")).toBe(true);

      // The conversation's earlier files count as the attached ones do.
      byId("attachments").querySelector<HTMLButtonElement>(".attachment-remove")!.click();
      conversation = 200;
      await box.addFiles([png("c.png", 600)]);
      expect(attached()).toEqual([]);
      expect(byId("composer-note").textContent).toMatch(/^"c.png" would make the request/);
      conversation = 0;
      await box.addFiles([png("c.png", 600)]);
      expect(attached()).toEqual(["Image 1: c.png"]);
      expect(byId("composer-note").textContent).toBe("");
    });

    it("says when a file is too large by itself, as base64", async () => {
      const box = composer(undefined, { limits: () => limits });
      // Under the limit as a file, over it once encoded.
      await box.addFiles([png("big.png", 700)]);
      expect(700).toBeLessThan(limits.bodyBytes);
      expect(attached()).toEqual([]);
      expect(byId("composer-note").textContent).toMatch(/^"big.png" is too large for this server: sent, it takes/);
    });
  });
});
