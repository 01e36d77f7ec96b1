// @vitest-environment jsdom
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { newConversation, type Conversation } from "../conversation";
import { HistoryDialog } from "./history_dialog";

const PAGE = readFileSync(resolve(__dirname, "../../index.html"), "utf8");

function saved(title: string): Conversation {
  const conversation = newConversation();
  conversation.title = title;
  conversation.messages.push({ id: "u", role: "user", text: title, images: [] });
  return conversation;
}

describe("the conversations drawer", () => {
  beforeEach(() => {
    document.documentElement.innerHTML = new DOMParser().parseFromString(PAGE, "text/html").documentElement.innerHTML;
    // jsdom has no modal dialogs.
    HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
      this.open = true;
    };
  });

  it("deletes a conversation only on a second click of its delete button", async () => {
    vi.useFakeTimers();
    const conversations = [saved("Receipt"), saved("Chart")];
    const remove = vi.fn(async (id: string) => {
      conversations.splice(
        conversations.findIndex((c) => c.id === id),
        1,
      );
    });
    const dialog = new HistoryDialog({
      list: async () => [...conversations],
      current: () => newConversation(),
      open: () => {},
      remove,
      startNew: () => {},
      download: () => {},
    });
    await dialog.open();
    const button = () => document.querySelector<HTMLButtonElement>(".history-remove")!;
    expect(button().getAttribute("aria-label")).toBe("Delete “Receipt”");

    button().click();
    expect(remove).not.toHaveBeenCalled();
    expect(button().textContent).toBe("Delete?");
    // Left alone, the question goes away.
    vi.advanceTimersByTime(5000);
    expect(button().textContent).toBe("");
    button().click();
    button().dispatchEvent(new FocusEvent("blur"));
    expect(button().textContent).toBe("");

    const first = conversations[0].id;
    button().click();
    button().click();
    expect(remove).toHaveBeenCalledWith(first);
    await vi.runAllTimersAsync();
    expect(document.querySelectorAll(".history-item")).toHaveLength(1);
    vi.useRealTimers();
  });

  it("offers the conversation on screen for download once it has messages", async () => {
    const download = vi.fn();
    let current = newConversation();
    const dialog = new HistoryDialog({
      list: async () => [],
      current: () => current,
      open: () => {},
      remove: async () => {},
      startNew: () => {},
      download,
    });
    await dialog.open();
    expect(document.getElementById("history-export")!.hidden).toBe(true);
    current = saved("Receipt");
    await dialog.open();
    expect(document.getElementById("history-export")!.hidden).toBe(false);
    const button = (name: string) =>
      [...document.querySelectorAll<HTMLButtonElement>("#history-export button")].find(
        (b) => b.getAttribute("aria-label") === name,
      )!;
    button("Download this conversation as Markdown").click();
    button("Download this conversation as JSON").click();
    expect(download.mock.calls).toEqual([["markdown"], ["json"]]);
  });
});
