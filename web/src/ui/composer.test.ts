// @vitest-environment jsdom
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { Composer, WAIT_FOR_THE_ANSWER } from "./composer";

const PAGE = readFileSync(resolve(__dirname, "../../index.html"), "utf8");

function composer(stop = () => {}): Composer {
  return new Composer({
    send: () => {},
    stop,
    openImage: () => {},
    latestMedia: () => undefined,
    imageCount: () => 0,
    videoCount: () => 0,
    limits: () => DEFAULT_SERVER_LIMITS,
    sendProblem: () => undefined,
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
});
