// The message box: text, images and videos waiting to be sent (camera/gallery pickers,
// paste, drag-and-drop), suggestions (a video's own when one is attached), and the
// send button that turns into a stop button while an answer is being written.
import { partBytes, questionBytes, requestSizeProblem } from "../api/request_size";
import type { ServerLimits } from "../api/server_limits";
import { newId, type ResponseFormat } from "../conversation";
import { byId, element } from "../dom";
import { ACCEPT_ATTRIBUTE, USE_A_SUPPORTED_FILE } from "../images/formats";
import { ImageError, isImageFile, prepareImage, type PreparedImage } from "../images/prepare";
import { BLANK, hasBlank, quickPromptsFor, type QuickPrompt } from "../quick_prompts";
import { VIDEO_ACCEPT_ATTRIBUTE, VIDEO_FORMAT_NAMES, videoTypeOf } from "../videos/formats";
import { prepareVideo, VideoError, videoTypeOfFile, type PreparedVideo } from "../videos/prepare";
import { iconSvg } from "./icons";
import { openableImage } from "./lightbox";
import { ScrollHint } from "./scroll_hint";
import { videoThumb } from "./video_thumb";

export interface PendingImage extends PreparedImage {
  kind: "image";
  id: string;
  url: string; // object URL of the thumbnail; the send handler takes it over
}

export interface PendingVideo extends PreparedVideo {
  kind: "video";
  id: string;
  /** Object URL of the poster, when the browser could draw one; the send handler takes it over. */
  posterUrl?: string;
}

export type PendingAttachment = PendingImage | PendingVideo;

export interface ComposerHandlers {
  send(text: string, images: PendingImage[], videos: PendingVideo[], responseFormat?: ResponseFormat): void;
  stop(): void;
  openImage(url: string, description: string): void;
  /** The kind of the newest image or video earlier in the conversation, if any. */
  latestMedia(): "image" | "video" | undefined;
  /** Images earlier in the conversation: every request carries them all. */
  imageCount(): number;
  /** Videos earlier in the conversation. */
  videoCount(): number;
  /** What the server accepts. */
  limits(): ServerLimits;
  /** The bytes of the conversation's next request before this question: the body the
   * server limits, which carries every earlier image and video. */
  requestBytes(): Promise<number>;
  /** Why no question can be sent as the settings stand, if so. */
  sendProblem(): string | undefined;
}

const NOT_USABLE = `${USE_A_SUPPORTED_FILE.slice(0, -1)}, or an ${VIDEO_FORMAT_NAMES} video.`;
export const WAIT_FOR_THE_ANSWER = "Wait for the answer, or stop it first.";
const FILL_THE_BLANK = `Type what to look for in place of "${BLANK}", then press Enter.`;

const MAX_TEXTAREA_PX = 200;

/** Whether typing goes through an on-screen keyboard (a phone or tablet without a mouse). */
function touchKeyboard(): boolean {
  return window.matchMedia?.("(pointer: coarse)").matches ?? false;
}

function attachmentBytes(item: PendingAttachment): number {
  return item.kind === "image" ? partBytes(item.blob.type, item.blob.size) : partBytes(item.type, item.bytes);
}

function releaseThumbnail(item: PendingAttachment): void {
  const url = item.kind === "image" ? item.url : item.posterUrl;
  if (url) URL.revokeObjectURL(url);
}

function perConversation(limit: number, what: "image" | "video"): string {
  return `At most ${limit} ${what}${limit === 1 ? "" : "s"} per conversation (the server's limit for a request, which carries the whole conversation). Start a new conversation for more.`;
}

export class Composer {
  private readonly form = byId<HTMLFormElement>("composer");
  private readonly prompt = byId<HTMLTextAreaElement>("prompt");
  private readonly list = byId<HTMLUListElement>("attachments");
  private readonly note = byId<HTMLParagraphElement>("composer-note");
  private readonly sendButton = byId<HTMLButtonElement>("send-button");
  private readonly stopButton = byId<HTMLButtonElement>("stop-button");
  private readonly dropOverlay = byId<HTMLDivElement>("drop-overlay");
  private attachments: PendingAttachment[] = [];
  private busy = false;
  private preparing = 0;
  // Files are prepared one batch at a time so thumbnails keep the order they came in.
  private adding: Promise<void> = Promise.resolve();
  private dragDepth = 0;
  // The suggestion last tapped: its response format goes with its text, unless edited.
  private chosen: QuickPrompt | null = null;
  private shownPrompts: QuickPrompt[] | null = null;
  private readonly promptRow = byId<HTMLDivElement>("quick-prompts");
  private readonly promptsHint: ScrollHint;

  constructor(private readonly handlers: ComposerHandlers) {
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.stopButton.addEventListener("click", () => this.handlers.stop());
    this.prompt.addEventListener("keydown", (event) => {
      // On-screen keyboards have no Shift+Enter: there Enter starts a new line and the
      // send button sends.
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && !touchKeyboard()) {
        event.preventDefault();
        this.submit();
      }
    });
    // Escape stops an answer being written, unless a dialog takes it to close itself.
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || !this.busy || event.isComposing) return;
      if (document.querySelector("dialog[open]")) return;
      event.preventDefault();
      this.handlers.stop();
    });
    this.prompt.addEventListener("input", () => this.autosize());
    this.bindPicker("camera-button", "camera-input");
    this.bindPicker("gallery-button", "gallery-input");
    document.addEventListener("paste", (event) => this.onPaste(event));
    this.bindDrop();
    const input = byId<HTMLInputElement>("camera-input");
    input.accept = `${ACCEPT_ATTRIBUTE},${VIDEO_ACCEPT_ATTRIBUTE}`;
    byId<HTMLInputElement>("gallery-input").accept = input.accept;
    this.promptsHint = new ScrollHint(this.promptRow, byId<HTMLButtonElement>("quick-prompts-more"));
    this.refreshPrompts();
  }

  /** Shows the suggestions for the newest image or video (attached, or earlier). */
  refreshPrompts(): void {
    const attached = this.attachments.length > 0;
    const latest = attached ? (this.count("video") > 0 ? "video" : "image") : this.handlers.latestMedia();
    const prompts = quickPromptsFor(latest);
    if (prompts === this.shownPrompts) return;
    this.shownPrompts = prompts;
    this.promptRow.replaceChildren(...prompts.map((quick) => this.quickPromptChip(quick)));
    this.promptRow.scrollLeft = 0;
    this.promptRow.setAttribute("aria-label", latest === "video" ? "Suggestions for the video" : "Suggestions");
    this.promptsHint?.update();
  }

  focus(): void {
    this.prompt.focus();
  }

  /** While an answer is written: the stop button, which then hands the focus to the
   * question box when the answer ends. */
  focusStop(): void {
    this.stopButton.focus();
  }

  setBusy(busy: boolean): void {
    // Hiding the focused button would drop focus to the page: asked before hiding. The
    // stop button takes over from a send button reached with the keyboard (not from a
    // tapped one, whose focus would bring a phone's keyboard up when the answer ends).
    const stopHadFocus = this.stopButton.contains(document.activeElement);
    const sendHadKeyboardFocus = this.sendButton.matches(":focus-visible");
    this.busy = busy;
    this.sendButton.hidden = busy;
    this.stopButton.hidden = !busy;
    if (busy && sendHadKeyboardFocus) this.stopButton.focus();
    if (!busy && stopHadFocus) this.prompt.focus();
    if (!busy && this.note.textContent === WAIT_FOR_THE_ANSWER) this.showNote("");
  }

  /** Clears the note if it still says `text`; whether it did. */
  clearNote(text: string): boolean {
    if (this.note.textContent !== text) return false;
    this.showNote("");
    return true;
  }

  showNote(text: string, kind: "info" | "error" = "info"): void {
    this.note.textContent = text;
    this.note.classList.toggle("is-error", kind === "error");
  }

  /** Adds image and video files from any source, in the order they came; others are reported. */
  addFiles(files: Iterable<File>): Promise<void> {
    const candidates = [...files];
    if (candidates.length === 0) return this.adding;
    // A large photo takes seconds to decode: a placeholder per file shows it is coming.
    this.preparing += candidates.length;
    this.renderAttachments();
    this.adding = this.adding
      .then(() => this.prepareAndAdd(candidates))
      .finally(() => {
        this.preparing -= candidates.length;
        this.renderAttachments();
      });
    return this.adding;
  }

  private async prepareAndAdd(candidates: File[]): Promise<void> {
    const videoTypes = await Promise.all(candidates.map((file) => videoTypeOfFile(file)));
    const rejected = candidates.filter((file, i) => !videoTypes[i] && !isImageFile(file));
    const images = candidates.filter((file, i) => !videoTypes[i] && isImageFile(file));
    const videos = candidates.flatMap((file, i) => (videoTypes[i] ? [{ file, type: videoTypes[i] }] : []));
    const limits = this.handlers.limits();
    const imageRoom = Math.max(0, limits.imagesPerRequest - this.handlers.imageCount() - this.count("image"));
    const videoRoom = Math.max(0, limits.videosPerRequest - this.handlers.videoCount() - this.count("video"));
    const messages: string[] = [];
    if (rejected.length) {
      const names = rejected.map((f) => `"${f.name}"`).join(", ");
      messages.push(`${names} ${rejected.length === 1 ? "is" : "are"} not an image or a video. ${NOT_USABLE}`);
    }
    if (images.length > imageRoom) messages.push(perConversation(limits.imagesPerRequest, "image"));
    if (videos.length > videoRoom) messages.push(perConversation(limits.videosPerRequest, "video"));
    // Prepared side by side, then added in the order the files came.
    const taken = new Set<File>([...images.slice(0, imageRoom), ...videos.slice(0, videoRoom).map((v) => v.file)]);
    const results = await Promise.allSettled(
      candidates.map(async (file, i): Promise<PendingAttachment | null> => {
        if (!taken.has(file)) return null;
        const type = videoTypes[i];
        if (type) {
          const video = await prepareVideo(file, type, limits);
          const posterUrl = video.poster ? URL.createObjectURL(video.poster) : undefined;
          return { ...video, kind: "video", id: newId(), posterUrl };
        }
        const image = await prepareImage(file, limits);
        return { ...image, kind: "image", id: newId(), url: URL.createObjectURL(image.blob) };
      }),
    );
    // A file within the server's limits for one image or video may still make the
    // request too large for it, as base64 beside the conversation's other files.
    let total = (await this.handlers.requestBytes()) + questionBytes(this.prompt.value);
    for (const item of this.attachments) total += attachmentBytes(item);
    for (const result of results) {
      if (result.status === "fulfilled") {
        if (!result.value) continue;
        const bytes = attachmentBytes(result.value);
        const alone = questionBytes(this.prompt.value) + bytes;
        const sizes = { alone, request: total + bytes };
        const problem = requestSizeProblem(result.value.name, result.value.kind, sizes, limits.bodyBytes);
        if (problem) {
          messages.push(problem);
          releaseThumbnail(result.value);
          continue;
        }
        total += bytes;
        this.attachments.push(result.value);
      } else {
        const known = result.reason instanceof ImageError || result.reason instanceof VideoError;
        messages.push(known ? result.reason.message : "A file could not be read.");
      }
    }
    this.renderAttachments();
    this.showNote(messages.join(" "), messages.length ? "error" : "info");
  }

  private count(kind: PendingAttachment["kind"]): number {
    return this.attachments.filter((item) => item.kind === kind).length;
  }

  private submit(): void {
    if (this.busy) {
      this.showNote(WAIT_FOR_THE_ANSWER);
      return;
    }
    if (this.preparing > 0) {
      this.showNote("Still reading the files…");
      return;
    }
    const text = this.prompt.value.trim();
    if (!text && this.attachments.length === 0) {
      this.showNote("Type a question or add an image first.");
      this.prompt.focus();
      return;
    }
    if (this.chosen && hasBlank(this.chosen) && text.includes(BLANK)) {
      this.showNote(FILL_THE_BLANK);
      this.selectBlank();
      return;
    }
    const problem = this.handlers.sendProblem();
    if (problem) {
      this.showNote(problem, "error");
      return;
    }
    const images = this.attachments.filter((item): item is PendingImage => item.kind === "image");
    const videos = this.attachments.filter((item): item is PendingVideo => item.kind === "video");
    const responseFormat = this.chosen?.text === text ? this.chosen.responseFormat : undefined;
    this.attachments = [];
    this.chosen = null;
    this.prompt.value = "";
    this.autosize();
    this.renderAttachments();
    this.showNote("");
    this.handlers.send(text, images, videos, responseFormat);
  }

  /** Selects the blank of a filled-in suggestion, so that typing replaces it. */
  private selectBlank(): void {
    const at = this.prompt.value.indexOf(BLANK);
    this.prompt.focus();
    if (at >= 0) this.prompt.setSelectionRange(at, at + BLANK.length);
  }

  private quickPromptChip(quick: QuickPrompt): HTMLButtonElement {
    const chip = element("button", "chip", quick.label);
    chip.type = "button";
    chip.title = quick.text;
    chip.addEventListener("click", () => {
      this.prompt.value = quick.text;
      this.chosen = quick;
      this.autosize();
      const hasMedia = this.attachments.length > 0 || this.handlers.latestMedia() !== undefined;
      if (hasBlank(quick)) {
        this.showNote(
          hasMedia
            ? FILL_THE_BLANK
            : `Add a video first, then ${FILL_THE_BLANK[0].toLowerCase()}${FILL_THE_BLANK.slice(1)}`,
        );
        this.selectBlank();
      } else if (hasMedia) {
        this.submit();
      } else {
        this.showNote("Add an image first: use the camera button, paste one, or drop it here. Then press Enter.");
        byId<HTMLButtonElement>("camera-button").focus();
      }
    });
    return chip;
  }

  private renderAttachments(): void {
    this.list.hidden = this.attachments.length === 0 && this.preparing === 0;
    let images = 0;
    let videos = 0;
    const placeholders = Array.from({ length: this.preparing }, () => {
      const li = element("li", "attachment is-preparing");
      li.append(element("span", "attachment-spinner"), element("span", "visually-hidden", "Reading a file…"));
      return li;
    });
    this.list.replaceChildren(
      ...this.attachments.map((item) => {
        const li = element("li", "attachment");
        const remove = element("button", "attachment-remove");
        remove.type = "button";
        remove.innerHTML = iconSvg("close");
        remove.addEventListener("click", () => this.removeAttachment(item.id));
        if (item.kind === "image") {
          const number = ++images;
          const thumb = element("img", "attachment-image");
          thumb.src = item.url;
          thumb.alt = `Image ${number}: ${item.name}`;
          const open = openableImage(thumb, `Show image ${number} large (${item.name})`, () =>
            this.handlers.openImage(item.url, thumb.alt),
          );
          remove.setAttribute("aria-label", `Remove image ${number} (${item.name})`);
          li.append(open, remove);
        } else {
          const number = ++videos;
          li.classList.add("is-video");
          li.append(videoThumb(item, `Video ${number}: ${item.name}`), remove);
          remove.setAttribute("aria-label", `Remove video ${number} (${item.name})`);
        }
        return li;
      }),
      ...placeholders,
    );
    this.refreshPrompts();
  }

  private removeAttachment(id: string): void {
    const index = this.attachments.findIndex((item) => item.id === id);
    if (index < 0) return;
    releaseThumbnail(this.attachments.splice(index, 1)[0]);
    this.renderAttachments();
    const next =
      this.list.querySelectorAll<HTMLButtonElement>(".attachment-remove")[Math.min(index, this.attachments.length - 1)];
    (next ?? this.prompt).focus();
  }

  private bindPicker(buttonId: string, inputId: string): void {
    const input = byId<HTMLInputElement>(inputId);
    byId<HTMLButtonElement>(buttonId).addEventListener("click", () => input.click());
    input.addEventListener("change", () => {
      const files = [...(input.files ?? [])];
      input.value = "";
      void this.addFiles(files);
    });
  }

  private onPaste(event: ClipboardEvent): void {
    const files = [...(event.clipboardData?.files ?? [])].filter(
      (file) => isImageFile(file) || videoTypeOf(file.type, file.name) !== undefined,
    );
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
