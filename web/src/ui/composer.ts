// The message box: text, images waiting to be sent (camera/gallery pickers, paste,
// drag-and-drop), suggestions, and the send button that turns into a stop button
// while an answer is being written.
import { newId, type ResponseFormat } from "../conversation";
import { byId, element } from "../dom";
import { ACCEPT_ATTRIBUTE, USE_A_SUPPORTED_FILE } from "../images/formats";
import { ImageError, isImageFile, prepareImage, type PreparedImage } from "../images/prepare";
import { QUICK_PROMPTS, type QuickPrompt } from "../quick_prompts";
import { iconSvg } from "./icons";
import { openableImage } from "./lightbox";
import { ScrollHint } from "./scroll_hint";

export interface PendingImage extends PreparedImage {
  id: string;
  url: string; // object URL of the thumbnail; the send handler takes it over
}

export interface ComposerHandlers {
  send(text: string, images: PendingImage[], responseFormat?: ResponseFormat): void;
  stop(): void;
  openImage(url: string, description: string): void;
  /** True when an earlier message already has an image the prompt can refer to. */
  hasImages(): boolean;
}

export const MAX_IMAGES_PER_MESSAGE = 10;
const MAX_TEXTAREA_PX = 200;

export class Composer {
  private readonly form = byId<HTMLFormElement>("composer");
  private readonly prompt = byId<HTMLTextAreaElement>("prompt");
  private readonly list = byId<HTMLUListElement>("attachments");
  private readonly note = byId<HTMLParagraphElement>("composer-note");
  private readonly sendButton = byId<HTMLButtonElement>("send-button");
  private readonly stopButton = byId<HTMLButtonElement>("stop-button");
  private readonly dropOverlay = byId<HTMLDivElement>("drop-overlay");
  private images: PendingImage[] = [];
  private busy = false;
  private preparing = 0;
  // Files are prepared one batch at a time so thumbnails keep the order they came in.
  private adding: Promise<void> = Promise.resolve();
  private dragDepth = 0;
  // The suggestion last tapped: its response format goes with its text, unless edited.
  private chosen: QuickPrompt | null = null;

  constructor(private readonly handlers: ComposerHandlers) {
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.stopButton.addEventListener("click", () => this.handlers.stop());
    this.prompt.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.prompt.addEventListener("input", () => this.autosize());
    this.bindPicker("camera-button", "camera-input");
    this.bindPicker("gallery-button", "gallery-input");
    document.addEventListener("paste", (event) => this.onPaste(event));
    this.bindDrop();
    this.renderQuickPrompts();
  }

  focus(): void {
    this.prompt.focus();
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.sendButton.hidden = busy;
    this.stopButton.hidden = !busy;
    if (!busy && this.stopButton.contains(document.activeElement)) this.prompt.focus();
  }

  showNote(text: string, kind: "info" | "error" = "info"): void {
    this.note.textContent = text;
    this.note.classList.toggle("is-error", kind === "error");
  }

  /** Adds image files from any source, in the order they came; non-images are reported. */
  addFiles(files: Iterable<File>): Promise<void> {
    const candidates = [...files];
    this.preparing += candidates.length;
    this.adding = this.adding
      .then(() => this.prepareAndAdd(candidates))
      .finally(() => (this.preparing -= candidates.length));
    return this.adding;
  }

  private async prepareAndAdd(candidates: File[]): Promise<void> {
    const rejected = candidates.filter((file) => !isImageFile(file));
    const accepted = candidates.filter(isImageFile);
    const taken = accepted.slice(0, Math.max(0, MAX_IMAGES_PER_MESSAGE - this.images.length));
    const messages: string[] = [];
    if (rejected.length) {
      const names = rejected.map((f) => `"${f.name}"`).join(", ");
      messages.push(`${names} ${rejected.length === 1 ? "is" : "are"} not an image. ${USE_A_SUPPORTED_FILE}`);
    }
    if (taken.length < accepted.length) messages.push(`At most ${MAX_IMAGES_PER_MESSAGE} images per message.`);
    const results = await Promise.allSettled(taken.map((file) => prepareImage(file)));
    for (const result of results) {
      if (result.status === "fulfilled") {
        this.images.push({ ...result.value, id: newId(), url: URL.createObjectURL(result.value.blob) });
      } else {
        messages.push(result.reason instanceof ImageError ? result.reason.message : "An image could not be read.");
      }
    }
    this.renderAttachments();
    this.showNote(messages.join(" "), messages.length ? "error" : "info");
  }

  private submit(): void {
    if (this.busy) {
      this.showNote("Wait for the answer, or stop it first.");
      return;
    }
    if (this.preparing > 0) {
      this.showNote("Still reading the images…");
      return;
    }
    const text = this.prompt.value.trim();
    if (!text && this.images.length === 0) {
      this.showNote("Type a question or add an image first.");
      this.prompt.focus();
      return;
    }
    const images = this.images;
    const responseFormat = this.chosen?.text === text ? this.chosen.responseFormat : undefined;
    this.images = [];
    this.chosen = null;
    this.prompt.value = "";
    this.autosize();
    this.renderAttachments();
    this.showNote("");
    this.handlers.send(text, images, responseFormat);
  }

  private renderQuickPrompts(): void {
    const group = byId<HTMLDivElement>("quick-prompts");
    for (const quick of QUICK_PROMPTS) {
      const chip = element("button", "chip", quick.label);
      chip.type = "button";
      chip.title = quick.text;
      chip.addEventListener("click", () => {
        this.prompt.value = quick.text;
        this.chosen = quick;
        this.autosize();
        if (this.images.length > 0 || this.handlers.hasImages()) {
          this.submit();
        } else {
          this.showNote("Add an image first: use the camera button, paste one, or drop it here. Then press Enter.");
          byId<HTMLButtonElement>("camera-button").focus();
        }
      });
      group.append(chip);
    }
    new ScrollHint(group, byId<HTMLButtonElement>("quick-prompts-more"));
  }

  private renderAttachments(): void {
    this.list.hidden = this.images.length === 0;
    this.list.replaceChildren(
      ...this.images.map((image, index) => {
        const item = element("li", "attachment");
        const thumb = element("img", "attachment-image");
        thumb.src = image.url;
        thumb.alt = `Image ${index + 1}: ${image.name}`;
        const open = openableImage(thumb, `Show image ${index + 1} large (${image.name})`, () =>
          this.handlers.openImage(image.url, thumb.alt),
        );
        const remove = element("button", "attachment-remove");
        remove.type = "button";
        remove.setAttribute("aria-label", `Remove image ${index + 1} (${image.name})`);
        remove.innerHTML = iconSvg("close");
        remove.addEventListener("click", () => this.removeImage(image.id));
        item.append(open, remove);
        return item;
      }),
    );
  }

  private removeImage(id: string): void {
    const index = this.images.findIndex((image) => image.id === id);
    if (index < 0) return;
    URL.revokeObjectURL(this.images[index].url);
    this.images.splice(index, 1);
    this.renderAttachments();
    const next =
      this.list.querySelectorAll<HTMLButtonElement>(".attachment-remove")[Math.min(index, this.images.length - 1)];
    (next ?? this.prompt).focus();
  }

  private bindPicker(buttonId: string, inputId: string): void {
    const input = byId<HTMLInputElement>(inputId);
    input.accept = ACCEPT_ATTRIBUTE;
    byId<HTMLButtonElement>(buttonId).addEventListener("click", () => input.click());
    input.addEventListener("change", () => {
      const files = [...(input.files ?? [])];
      input.value = "";
      void this.addFiles(files);
    });
  }

  private onPaste(event: ClipboardEvent): void {
    const files = [...(event.clipboardData?.files ?? [])].filter(isImageFile);
    if (files.length === 0) return;
    // A screenshot pasted into the text box should not also paste its file name.
    if (!event.clipboardData?.types.includes("text/plain")) event.preventDefault();
    void this.addFiles(files);
  }

  private bindDrop(): void {
    const hasFiles = (event: DragEvent) => event.dataTransfer?.types.includes("Files") ?? false;
    window.addEventListener("dragenter", (event) => {
      if (!hasFiles(event)) return;
      this.dragDepth++;
      this.dropOverlay.hidden = false;
    });
    window.addEventListener("dragover", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
    });
    window.addEventListener("dragleave", (event) => {
      if (!hasFiles(event)) return;
      this.dragDepth = Math.max(0, this.dragDepth - 1);
      if (this.dragDepth === 0) this.dropOverlay.hidden = true;
    });
    window.addEventListener("drop", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      this.dragDepth = 0;
      this.dropOverlay.hidden = true;
      void this.addFiles(event.dataTransfer?.files ?? []);
    });
  }

  private autosize(): void {
    this.prompt.style.height = "auto";
    this.prompt.style.height = `${Math.min(this.prompt.scrollHeight, MAX_TEXTAREA_PX)}px`;
  }
}
