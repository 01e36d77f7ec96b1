// @vitest-environment jsdom
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { newConversation, type Conversation } from "../conversation";
import { MemoryStore, renameStored } from "../storage/conversation_store";
import { HistoryDialog, type HistoryHandlers } from "./history_dialog";

const PAGE = readFileSync(resolve(__dirname, "../../index.html"), "utf8");

function saved(title: string, answer = "", updatedAt = Date.now()): Conversation {
  const conversation = newConversation(updatedAt);
  conversation.title = title;
  conversation.messages.push({ id: "u", role: "user", text: title, images: [] });
  if (answer) conversation.messages.push({ id: "a", role: "assistant", parentId: "u", text: answer, status: "done" });
  return conversation;
}

function dialogWith(handlers: Partial<HistoryHandlers>): HistoryDialog {
  return new HistoryDialog({
    list: async () => [],
    current: () => newConversation(),
    open: () => {},
    rename: async () => {},
    remove: async () => {},
    startNew: () => {},
    download: () => {},
    ...handlers,
  });
}

const titles = () => [...document.querySelectorAll(".history-item .history-title")].map((node) => node.textContent);
const search = () => document.getElementById("history-search") as HTMLInputElement;
const searchStatus = () => document.getElementById("history-search-status")!.textContent;

function typeSearch(text: string): void {
  search().value = text;
  search().dispatchEvent(new Event("input"));
}

function key(target: Element, name: string): KeyboardEvent {
  const event = new KeyboardEvent("keydown", { key: name, bubbles: true, cancelable: true });
  target.dispatchEvent(event);
  return event;
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
    const dialog = dialogWith({ list: async () => [...conversations], remove });
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
    const dialog = dialogWith({ current: () => current, download });
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

  it("finds conversations by their title or the words of any message, as the search is typed", async () => {
    const conversations = [
      saved("Receipt from the bakery", "The total is 12.40 EUR."),
      saved("Chart of sales", "Q4 is the best quarter."),
      saved("Street sign", "It says EXIT 42."),
    ];
    const dialog = dialogWith({ list: async () => conversations });
    await dialog.open();
    expect(document.getElementById("history-search-row")!.hidden).toBe(false);
    expect(titles()).toHaveLength(3);

    typeSearch("CHART");
    expect(titles()).toEqual(["Chart of sales"]);
    expect(searchStatus()).toBe("1 conversation matches.");
    typeSearch("  eur");
    expect(titles()).toEqual(["Receipt from the bakery"]);
    typeSearch("e");
    expect(searchStatus()).toBe("3 conversations match.");
    typeSearch("unicorn");
    expect(titles()).toEqual([]);
    expect(document.querySelector(".history-empty")?.textContent).toBe(
      "No conversation has “unicorn” in its title or messages.",
    );
    expect(searchStatus()).toBe("No conversations match.");

    // Escape empties the search and keeps the drawer open; opened again, the search is empty.
    expect(key(search(), "Escape").defaultPrevented).toBe(true);
    expect(search().value).toBe("");
    expect(titles()).toHaveLength(3);
    expect(searchStatus()).toBe("");
    expect(key(search(), "Escape").defaultPrevented).toBe(false);
    typeSearch("sign");
    await dialog.open();
    expect(search().value).toBe("");
    expect(titles()).toHaveLength(3);
  });

  it("shows the search once there are two conversations to choose between", async () => {
    const conversations: Conversation[] = [];
    const dialog = dialogWith({ list: async () => [...conversations], remove: async () => void conversations.pop() });
    const searchRow = document.getElementById("history-search-row")!;
    await dialog.open();
    expect(searchRow.hidden).toBe(true);
    expect(document.querySelector(".history-empty")?.textContent).toBe("No saved conversations yet.");
    conversations.push(saved("Receipt"));
    await dialog.open();
    expect(searchRow.hidden).toBe(true);
    conversations.push(saved("Chart"));
    await dialog.open();
    expect(searchRow.hidden).toBe(false);
    // Down to one again, a search typed before no longer narrows the list.
    typeSearch("chart");
    document.querySelectorAll<HTMLButtonElement>(".history-remove")[0].click();
    document.querySelectorAll<HTMLButtonElement>(".history-remove")[0].click();
    await vi.waitFor(() => expect(searchRow.hidden).toBe(true));
    expect(search().value).toBe("");
    expect(titles()).toEqual(["Receipt"]);
  });

  it("renames a conversation in place: Enter keeps the name, Escape the old one", async () => {
    const store = new MemoryStore();
    const older = saved("Receipt", "", 1);
    await store.save(older);
    await store.save(saved("Chart", "", 2));
    const rename = vi.fn((id: string, name: string) => renameStored(store, id, name));
    const dialog = dialogWith({ list: () => store.list(), rename });
    await dialog.open();
    const renameButton = () => document.querySelectorAll<HTMLButtonElement>(".history-rename")[1];
    expect(renameButton().getAttribute("aria-label")).toBe("Rename “Receipt”");

    renameButton().click();
    let input = document.querySelector<HTMLInputElement>(".history-rename-input")!;
    expect(document.activeElement).toBe(input);
    expect(input.value).toBe("Receipt");
    expect(input.getAttribute("aria-label")).toBe("New name for “Receipt”");
    input.value = "Not kept";
    expect(key(input, "Escape").defaultPrevented).toBe(true);
    expect(document.querySelector(".history-rename-input")).toBeNull();
    expect(titles()).toEqual(["Chart", "Receipt"]);
    expect(document.activeElement).toBe(renameButton());
    expect(rename).not.toHaveBeenCalled();

    renameButton().click();
    input = document.querySelector<HTMLInputElement>(".history-rename-input")!;
    input.value = "  Bakery   receipt ";
    key(input, "Enter");
    await vi.waitFor(() => expect(titles()).toEqual(["Chart", "Bakery receipt"]));
    expect(rename).toHaveBeenCalledWith(older.id, "  Bakery   receipt ");
    // Kept in the store, in its place in the list, and found by its new name.
    expect((await store.get(older.id))?.title).toBe("Bakery receipt");
    expect((await store.get(older.id))?.updatedAt).toBe(1);
    expect(document.activeElement).toBe(renameButton());
    expect(renameButton().getAttribute("aria-label")).toBe("Rename “Bakery receipt”");
    typeSearch("bakery");
    expect(titles()).toEqual(["Bakery receipt"]);
  });

  it("keeps a name typed when the box is left, and gives back the first question's words for an empty one", async () => {
    const store = new MemoryStore();
    const conversation = saved("What is in this picture?");
    await store.save(conversation);
    const dialog = dialogWith({ list: () => store.list(), rename: (id, name) => renameStored(store, id, name) });
    await dialog.open();
    const startRenaming = () => {
      document.querySelector<HTMLButtonElement>(".history-rename")!.click();
      return document.querySelector<HTMLInputElement>(".history-rename-input")!;
    };
    const input = startRenaming();
    input.value = "Holiday photo";
    input.dispatchEvent(new FocusEvent("blur"));
    await vi.waitFor(() => expect(titles()).toEqual(["Holiday photo"]));

    const again = startRenaming();
    again.value = " ";
    key(again, "Enter");
    await vi.waitFor(() => expect(titles()).toEqual(["What is in this picture?"]));
    expect((await store.get(conversation.id))?.name).toBeUndefined();
  });
});
