// The list of saved conversations: open one, delete one, or start a new one; and the
// current one to download (export.ts).
import type { Conversation } from "../conversation";
import type { ExportFormat } from "../export";
import { byId, element } from "../dom";
import { iconSvg } from "./icons";
import { closeOnBackdropClick } from "./settings_dialog";
import { keepFocusInside } from "./focus_trap";

export interface HistoryHandlers {
  list(): Promise<Conversation[]>;
  current(): Conversation;
  open(id: string): void;
  remove(id: string): Promise<void>;
  startNew(): void;
  download(format: ExportFormat): void;
}

const CONFIRM_MS = 4000;

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export class HistoryDialog {
  private readonly dialog = byId<HTMLDialogElement>("history-dialog");
  private readonly list = byId<HTMLUListElement>("history-list");
  private readonly exportSection = byId<HTMLElement>("history-export");

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
    closeOnBackdropClick(this.dialog);
    keepFocusInside(this.dialog);
  }

  async open(): Promise<void> {
    await this.render();
    this.exportSection.hidden = this.handlers.current().messages.length === 0;
    this.dialog.showModal();
  }

  private async render(): Promise<void> {
    const conversations = (await this.handlers.list()).filter((c) => c.messages.length > 0);
    if (conversations.length === 0) {
      this.list.replaceChildren(element("li", "history-empty", "No saved conversations yet."));
      return;
    }
    this.list.replaceChildren(...conversations.map((c) => this.entry(c)));
  }

  private entry(conversation: Conversation): HTMLLIElement {
    const item = element("li", "history-item");
    const open = element("button", "history-open");
    open.type = "button";
    if (conversation.id === this.handlers.current().id) open.setAttribute("aria-current", "true");
    open.append(
      element("span", "history-title", conversation.title || "Untitled"),
      element("span", "history-date", DATE_FORMAT.format(conversation.updatedAt)),
    );
    open.addEventListener("click", () => {
      this.dialog.close();
      this.handlers.open(conversation.id);
    });
    item.append(open, this.removeButton(conversation));
    return item;
  }

  // Deleting takes a second click on the same spot (the button asks "Delete?"), as there
  // is no undo; the question goes away when focus leaves or after a while.
  private removeButton(conversation: Conversation): HTMLButtonElement {
    const title = conversation.title || "Untitled";
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
      void this.handlers.remove(conversation.id).then(() => this.render());
    });
    remove.addEventListener("blur", reset);
    return remove;
  }
}
