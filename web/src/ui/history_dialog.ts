// The list of saved conversations: open one, rename one, delete one, find one by the words
// of its title or messages, or start a new one; and the current one to download (export.ts).
import { conversationMatches, type Conversation } from "../conversation";
import type { ExportFormat } from "../export";
import { byId, element } from "../dom";
import { iconSvg } from "./icons";
import { closeOnBackdropClick } from "./settings_dialog";
import { keepFocusInside } from "./focus_trap";

export interface HistoryHandlers {
  list(): Promise<Conversation[]>;
  current(): Conversation;
  open(id: string): void;
  /** Names the conversation `id`; a blank name gives back its first question's words. */
  rename(id: string, name: string): Promise<void>;
  remove(id: string): Promise<void>;
  startNew(): void;
  download(format: ExportFormat): void;
}

const CONFIRM_MS = 4000;
const MAX_NAME_LENGTH = 100;
const MIN_TO_SEARCH = 2;

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function titleOf(conversation: Conversation): string {
  return conversation.title || "Untitled";
}

export class HistoryDialog {
  private readonly dialog = byId<HTMLDialogElement>("history-dialog");
  private readonly list = byId<HTMLUListElement>("history-list");
  private readonly exportSection = byId<HTMLElement>("history-export");
  private readonly search = byId<HTMLInputElement>("history-search");
  private readonly searchRow = byId<HTMLElement>("history-search-row");
  // Said to a screen reader as the list narrows; the list itself is no live region.
  private readonly searchStatus = byId<HTMLElement>("history-search-status");
  private saved: Conversation[] = [];

  constructor(private readonly handlers: HistoryHandlers) {
    byId<HTMLButtonElement>("history-close").addEventListener("click", () => this.dialog.close());
    byId<HTMLButtonElement>("history-new").addEventListener("click", () => {
      this.dialog.close();
      this.handlers.startNew();
    });
    for (const [id, format] of [
      ["export-markdown", "markdown"],
      ["export-json", "json"],
    ] as const) {
      byId<HTMLButtonElement>(id).addEventListener("click", () => this.handlers.download(format));
    }
    this.search.addEventListener("input", () => this.draw());
    this.search.addEventListener("keydown", (event) => {
      // Escape empties a search first; in an empty box it closes the drawer as elsewhere.
      if (event.key !== "Escape" || !this.search.value) return;
      event.preventDefault();
      this.search.value = "";
      this.draw();
    });
    closeOnBackdropClick(this.dialog);
    keepFocusInside(this.dialog);
  }

  async open(): Promise<void> {
    this.search.value = "";
    await this.load();
    this.exportSection.hidden = this.handlers.current().messages.length === 0;
    this.dialog.showModal();
  }

  private async load(): Promise<void> {
    this.saved = (await this.handlers.list()).filter((c) => c.messages.length > 0);
    this.draw();
  }

  private draw(): void {
    // One conversation needs no finding: the box shows (and searches) from two on.
    const searchable = this.saved.length >= MIN_TO_SEARCH;
    this.searchRow.hidden = !searchable;
    if (!searchable) this.search.value = "";
    const query = this.search.value.trim();
    if (this.saved.length === 0) {
      this.searchStatus.textContent = "";
      this.list.replaceChildren(element("li", "history-empty", "No saved conversations yet."));
      return;
    }
    const found = this.saved.filter((c) => conversationMatches(c, query));
    this.searchStatus.textContent = !query
      ? ""
      : found.length === 0
        ? "No conversations match."
        : `${found.length} conversation${found.length === 1 ? "" : "s"} match${found.length === 1 ? "es" : ""}.`;
    if (found.length === 0) {
      this.list.replaceChildren(
        element("li", "history-empty", `No conversation has “${query}” in its title or messages.`),
      );
      return;
    }
    this.list.replaceChildren(...found.map((c) => this.entry(c)));
  }

  private entry(conversation: Conversation): HTMLLIElement {
    const item = element("li", "history-item");
    item.dataset.id = conversation.id;
    const open = element("button", "history-open");
    open.type = "button";
    if (conversation.id === this.handlers.current().id) open.setAttribute("aria-current", "true");
    open.append(
      element("span", "history-title", titleOf(conversation)),
      element("span", "history-date", DATE_FORMAT.format(conversation.updatedAt)),
    );
    open.addEventListener("click", () => {
      this.dialog.close();
      this.handlers.open(conversation.id);
    });
    const rename = element("button", "icon-button small history-rename");
    rename.type = "button";
    rename.setAttribute("aria-label", `Rename “${titleOf(conversation)}”`);
    rename.title = "Rename";
    rename.innerHTML = iconSvg("edit");
    rename.addEventListener("click", () => this.startRenaming(conversation, open));
    item.append(open, rename, this.removeButton(conversation));
    return item;
  }

  /** The title becomes a text box in place: Enter (or leaving it) keeps the name typed,
   * Escape keeps the old one; the focus then returns to the rename button. */
  private startRenaming(conversation: Conversation, open: HTMLButtonElement): void {
    const input = element("input", "history-rename-input");
    input.type = "text";
    input.value = titleOf(conversation);
    input.maxLength = MAX_NAME_LENGTH;
    input.setAttribute("aria-label", `New name for “${titleOf(conversation)}”`);
    input.setAttribute("aria-describedby", "history-rename-hint");
    let finished = false;
    const finish = (keep: boolean) => {
      if (finished) return;
      finished = true;
      const name = input.value;
      input.replaceWith(open);
      this.focusRename(conversation.id);
      if (!keep || name.trim() === titleOf(conversation)) return;
      void this.handlers
        .rename(conversation.id, name)
        .then(() => this.load())
        .then(() => this.focusRename(conversation.id));
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        finish(true);
      } else if (event.key === "Escape") {
        // Not the drawer's Escape: only the edit is given up.
        event.preventDefault();
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
    open.replaceWith(input);
    input.focus();
    input.select();
  }

  /** Focuses the rename button of `id`, or the search box when the search hides it now. */
  private focusRename(id: string): void {
    const item = [...this.list.querySelectorAll<HTMLElement>(".history-item")].find((li) => li.dataset.id === id);
    (item?.querySelector<HTMLButtonElement>(".history-rename") ?? this.search).focus();
  }

  // Deleting takes a second click on the same spot (the button asks "Delete?"), as there
  // is no undo; the question goes away when focus leaves or after a while.
  private removeButton(conversation: Conversation): HTMLButtonElement {
    const title = titleOf(conversation);
    const remove = element("button", "icon-button small history-remove");
    remove.type = "button";
    let confirming = false;
    let timer = 0;
    const reset = () => {
      confirming = false;
      clearTimeout(timer);
      remove.classList.remove("is-confirming");
      remove.setAttribute("aria-label", `Delete “${title}”`);
      remove.innerHTML = iconSvg("trash");
    };
    reset();
    remove.addEventListener("click", () => {
      if (!confirming) {
        confirming = true;
        remove.classList.add("is-confirming");
        remove.setAttribute("aria-label", `Delete “${title}” for good: click again`);
        remove.textContent = "Delete?";
        timer = window.setTimeout(reset, CONFIRM_MS);
        return;
      }
      reset();
      void this.handlers.remove(conversation.id).then(() => this.load());
    });
    remove.addEventListener("blur", reset);
    return remove;
  }
}
