// How one message looks. A user message shows its images (each opens large), its
// videos (poster, length, and once answered the frames the model saw; each plays) and
// text (a long one folded to its first lines), which can be edited and sent again as a
// new version; an answer renders its Markdown as it streams in (code blocks with a copy
// button, a JSON answer as a JSON block), draws any grounding boxes over the image they
// refer to, and ends with its speed figures, copy and regenerate buttons, and errors with
// a retry button; one cut off at the length limit offers to continue. Either shows a
// switcher between its versions when it has several.
import { canContinue } from "../answer_continuation";
import {
  isRefusal,
  videosOf,
  type AnswerError,
  type AssistantMessage,
  type ImageRef,
  type UserMessage,
  type VideoRef,
} from "../conversation";
import { CONTEXT_LENGTH_EXCEEDED } from "../api/errors";
import type { PromptProgress } from "../api/types";
import type { VersionPosition } from "../conversation_tree";
import { element } from "../dom";
import { GroundingView } from "../grounding/overlay";
import { parseGrounding } from "../grounding/parse";
import { jsonCodeBlock, renderMarkdown } from "../markdown";
import type { BlobCache } from "../storage/blob_cache";
import { MAX_STORED_VIDEO_BYTES } from "../storage/conversation_store";
import { answerStats, videoFacts } from "../timings";
import { formatBytes, formatClipDuration } from "../videos/formats";
import { BlockAnnouncer } from "./announcer";
import { addCodeCopyButtons } from "./code_blocks";
import { copyButton } from "./copy_button";
import { FoldedText } from "./folded_text";
import { BUSY_DOTS, iconSvg } from "./icons";
import { openableImage } from "./lightbox";
import { waitStatus } from "./prompt_progress";
import { questionEditor } from "./question_editor";
import { ReasoningView, THINKING } from "./reasoning_view";
import { versionSwitcher, type VersionStep } from "./version_switcher";
import { videoThumb } from "./video_thumb";

export interface QuestionContext {
  /** Images and video posters. */
  cache: BlobCache;
  videos: BlobCache;
  /** The number of this message's first image (video) in the conversation. */
  firstImageNumber: number;
  firstVideoNumber: number;
  openImage(url: string, description: string): void;
  openVideo(url: string, description: string): void;
  /** Sends the question with new text as a new version; false when that cannot happen now. */
  resend(text: string): boolean;
  versions: VersionPosition;
  showVersion(step: VersionStep): void;
  /** A long question was unfolded to be read. */
  onUnfold(): void;
}

export function userMessageView(message: UserMessage, context: QuestionContext): HTMLElement {
  const article = element("article", "message user");
  article.setAttribute("aria-label", "You");
  if (message.images.length > 0) {
    const strip = element("div", "message-images");
    message.images.forEach((image, i) => {
      const img = element("img", "message-image");
      const description = `Image ${context.firstImageNumber + i}: ${image.name}`;
      img.alt = description;
      img.width = image.width;
      img.height = image.height;
      void context.cache.displayUrl(image.id).then((url) => {
        if (url) img.src = url;
        else img.alt += " (no longer stored in this browser)";
      });
      const label = `Show image ${context.firstImageNumber + i} large (${image.name})`;
      strip.append(openableImage(img, label, () => context.openImage(img.src, description)));
    });
    article.append(strip);
  }
  const videos = videosOf(message);
  if (videos.length > 0) {
    const strip = element("div", "message-videos");
    videos.forEach((video, i) => strip.append(videoView(video, context.firstVideoNumber + i, context)));
    article.append(strip);
  }
  const text = new FoldedText(message.text, () => context.onUnfold());
  const edit = element("button", "icon-button small message-edit");
  edit.type = "button";
  edit.setAttribute("aria-label", "Edit the question");
  edit.title = "Edit the question";
  edit.innerHTML = iconSvg("edit");
  edit.addEventListener("click", () => {
    const editor = questionEditor(message.text, {
      allowEmpty: message.images.length > 0 || videos.length > 0,
      send: (edited) => context.resend(edited),
      close: () => {
        editor.remove();
        article.classList.remove("is-editing");
        // A sent edit is a new version, drawn in a new view: the app moves the focus.
        if (article.isConnected) edit.focus();
      },
    });
    article.classList.add("is-editing");
    text.toggle.after(editor);
  });
  article.append(text.text, text.toggle, edit);
  if (context.versions.count > 1) article.append(versionSwitcher(context.versions, "question", context.showVersion));
  return article;
}

function videoView(video: VideoRef, number: number, context: QuestionContext): HTMLElement {
  const figure = element("figure", "message-video");
  figure.dataset.videoId = video.id;
  const description = `Video ${number}: ${video.name}`;
  const open = element("button", "video-open");
  open.type = "button";
  open.setAttribute("aria-label", `Play video ${number} (${video.name})`);
  open.title = "Play";
  const thumb = videoThumb({ durationS: video.durationS }, description);
  open.append(thumb);
  if (video.posterId) {
    void context.cache.displayUrl(video.posterId).then((url) => {
      if (!url) return;
      const poster = element("img", "video-poster");
      poster.src = url;
      poster.alt = "";
      thumb.querySelector("svg")?.remove();
      thumb.prepend(poster);
    });
  }
  const caption = element("figcaption", "video-caption");
  const about = [video.name];
  if (video.durationS !== undefined) about.push(formatClipDuration(video.durationS));
  about.push(formatBytes(video.bytes));
  caption.append(element("span", "video-name", about.join(" · ")), element("span", "video-facts"));
  figure.append(open, caption);
  showVideoFacts(figure, video);
  void context.videos.displayUrl(video.id).then((url) => {
    if (url) {
      open.addEventListener("click", () => context.openVideo(url, description));
      return;
    }
    open.disabled = true;
    figure.classList.add("is-missing");
    const why = video.stored
      ? "This video is no longer stored in this browser"
      : `This video was larger than ${formatBytes(MAX_STORED_VIDEO_BYTES)}, too large to keep in this browser`;
    figure.append(
      element(
        "p",
        "video-missing",
        `${why}: questions about it cannot be sent again. Start a new conversation with the file.`,
      ),
    );
  });
  return figure;
}

/** Writes what the server made of a video (sampled frames, tokens) under its poster. */
export function showVideoFacts(root: ParentNode, video: VideoRef): void {
  const figure =
    root instanceof HTMLElement && root.dataset.videoId === video.id
      ? root
      : root.querySelector<HTMLElement>(`[data-video-id="${video.id}"]`);
  const facts = figure?.querySelector(".video-facts");
  if (facts) facts.textContent = video.timing ? videoFacts(video.timing) : "";
}

export interface AnswerContext {
  /** Images shown before this answer, oldest first: what its boxes can refer to. */
  images: ImageRef[];
  /** Whether a video was sent before this answer. */
  hasVideo: boolean;
  cache: BlobCache;
  /** Writes a new version of this answer to the same question. */
  onRegenerate(): void;
  /** Writes on from the end of this answer, cut off at the length limit. */
  onContinue(): void;
  /** Starts a new conversation (offered when this one no longer fits the context). */
  onNewConversation(): void;
  /** Reads text out to a screen reader, politely (announcer.ts). */
  announce(text: string): void;
  versions: VersionPosition;
  showVersion(step: VersionStep): void;
}

/** Characters of a streaming answer per millisecond of wait between its renders. */
const REFUSED_QUESTION = "This question is left out of the conversation from now on: edit it, or ask something else.";

const STREAMING_CHARACTERS_PER_MS = 50;
const MAX_STREAMING_RENDER_INTERVAL_MS = 2000;

/**
 * The least time between two renders of a streaming answer. Each render parses and
 * sanitizes the whole text again (about 3 ms per 1000 characters on a desktop, a few
 * times that on a phone), so the wait grows with the text and rendering keeps to a
 * small share of the main thread; a short answer still renders every frame.
 */
export function streamingRenderIntervalMs(textLength: number): number {
  return Math.min(MAX_STREAMING_RENDER_INTERVAL_MS, textLength / STREAMING_CHARACTERS_PER_MS);
}

export class AnswerView {
  readonly element = element("article", "message assistant");
  private readonly status = element("div", "answer-status");
  private readonly statusText = element("span", "answer-status-text");
  private readonly statusBar = element("progress", "answer-progress");
  private readonly body = element("div", "markdown");
  private readonly groundingSlot = element("div", "grounding-slot");
  private readonly errorBox = element("div", "answer-error");
  private readonly meta = element("footer", "answer-meta");
  private reasoning: ReasoningView | null = null;
  private grounding: GroundingView | null = null;
  private groundingPending = false;
  private frame = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private renderedText: string | null = null;
  private renderedAt = 0;
  // Said in place of "Thinking…" while the page waits to ask a busy server again.
  private waiting = "";
  // The server's latest report on the work before the first token, if it sends them.
  private progress: PromptProgress | undefined;
  // Only an answer being written is read out, not one shown again from storage.
  private announcer: BlockAnnouncer | null;
  // Why the latest Continue failed; the answer itself stays as it was, so it is not kept.
  private continueError: AnswerError | null = null;
  private drawnStreaming = false;

  constructor(
    private message: AssistantMessage,
    private readonly context: AnswerContext,
  ) {
    this.announcer = message.status === "streaming" ? new BlockAnnouncer(context.announce) : null;
    this.element.setAttribute("aria-label", "Answer");
    this.errorBox.setAttribute("role", "alert");
    // Built once: drawing the dots anew at each report would restart their pulse.
    this.status.innerHTML = BUSY_DOTS;
    this.statusBar.max = 100;
    this.status.append(this.statusText, this.statusBar);
    this.element.append(this.status, this.body, this.groundingSlot, this.errorBox, this.meta);
    this.render();
  }

  /**
   * Shows a newer state of the message: at once when it has ended; while it streams, at
   * most once per frame and less often as it grows (streamingRenderIntervalMs).
   */
  update(message: AssistantMessage): void {
    this.message = message;
    if (message.status === "streaming" && !this.drawnStreaming) {
      // Continued: read out from the block it was cut off in, which the new text finishes;
      // the flag, Continue and any earlier failure go at once.
      this.announcer = new BlockAnnouncer(this.context.announce, Math.max(0, this.body.childElementCount - 1));
      this.continueError = null;
      this.progress = undefined;
      this.render();
      return;
    }
    if (message.status !== "streaming") {
      cancelAnimationFrame(this.frame);
      clearTimeout(this.timer);
      this.frame = 0;
      this.timer = undefined;
      this.render();
      return;
    }
    if (this.frame || this.timer !== undefined) return;
    const length = message.text.length + (message.reasoning?.length ?? 0);
    const wait = this.renderedAt + streamingRenderIntervalMs(length) - performance.now();
    if (wait <= 0) {
      this.renderNextFrame();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.renderNextFrame();
    }, wait);
  }

  /** Says why a continuation failed, under the answer it left as it was. */
  showContinueError(error: AnswerError): void {
    this.continueError = error;
    this.render();
  }

  /** Says why no answer has come yet (a busy server asked again later); "" when it no longer waits. */
  setWaiting(text: string): void {
    this.waiting = text;
    this.render();
  }

  /** Shows how far the server has come before the first token. */
  setProgress(progress: PromptProgress): void {
    this.progress = progress;
    this.renderStatus();
  }

  private renderNextFrame(): void {
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    const message = this.message;
    const streaming = message.status === "streaming";
    this.drawnStreaming = streaming;
    this.element.setAttribute("aria-busy", String(streaming));
    this.element.classList.toggle("is-streaming", streaming);
    this.renderStatus();
    if (message.text !== this.renderedText) {
      const source = message.responseFormat ? jsonCodeBlock(message.text) : message.text;
      // Once code colours or maths have loaded, drawn again with them, unless newer text
      // has been drawn since (with them, or asking for them again).
      const drawn = message.text;
      this.body.innerHTML = renderMarkdown(source, () => {
        if (this.renderedText !== drawn) return;
        this.renderedText = null;
        this.render();
      });
      addCodeCopyButtons(this.body);
      this.renderedText = message.text;
      this.renderedAt = performance.now();
      this.renderGrounding();
    }
    if (this.renderReasoning(streaming)) this.renderedAt = performance.now();
    this.announcer?.update(this.body, !streaming);
    this.renderError();
    this.renderMeta();
  }

  /** The line above an answer that has not begun: what the server does, and how far it
   * has come when it says. A screen reader reads the bar, not the same words twice, and
   * is not told each new percent: the line is no live region. */
  private renderStatus(): void {
    const message = this.message;
    this.status.hidden = !(message.status === "streaming" && !message.text && !message.reasoning);
    const media = this.context.hasVideo ? "video" : this.context.images.length > 0 ? "image" : "none";
    const { label, percent } = this.waiting ? { label: this.waiting } : waitStatus(media, this.progress);
    this.statusText.textContent = percent === undefined ? label : `${label} ${percent}%`;
    if (percent === undefined) this.statusText.removeAttribute("aria-hidden");
    else this.statusText.setAttribute("aria-hidden", "true");
    this.statusBar.hidden = percent === undefined;
    if (percent === undefined) return;
    this.statusBar.value = percent;
    this.statusBar.setAttribute("aria-label", label);
  }

  /** A thinking model's reasoning, above the answer. A screen reader hears that it
   * thinks, not the reasoning: the answer is what it reads out. Returns whether the
   * reasoning was drawn. */
  private renderReasoning(streaming: boolean): boolean {
    const { reasoning, text, reasoningMs } = this.message;
    if (!reasoning) return false;
    const thinking = streaming && !text;
    if (!this.reasoning) {
      this.reasoning = new ReasoningView();
      this.status.after(this.reasoning.element);
      if (this.announcer && thinking) this.context.announce(THINKING);
    }
    return this.reasoning.update(reasoning, thinking, reasoningMs);
  }

  private renderGrounding(): void {
    const items = parseGrounding(this.message.text);
    if (items.length === 0 || this.context.images.length === 0) return;
    this.foldCoordinateBlocks();
    if (this.grounding) {
      this.grounding.update(items);
      return;
    }
    if (this.groundingPending) return;
    this.groundingPending = true;
    const refs = this.context.images;
    void Promise.all(refs.map((ref) => this.context.cache.displayUrl(ref.id))).then((urls) => {
      const images = refs.map((ref, i) => ({ url: urls[i] ?? "", alt: `Image ${i + 1}: ${ref.name}` }));
      this.grounding = new GroundingView(images, images.length - 1);
      this.grounding.update(parseGrounding(this.message.text));
      this.groundingSlot.replaceChildren(this.grounding.element);
    });
  }

  /** Once the boxes are drawn, the JSON they came from is detail: fold it away. */
  private foldCoordinateBlocks(): void {
    for (const pre of this.body.querySelectorAll("pre")) {
      if (!/bbox_2d|point_2d/.test(pre.textContent ?? "")) continue;
      const block = pre.closest(".code-block") ?? pre;
      if (block.parentElement?.matches("details.coordinates")) continue;
      const fold = element("details", "coordinates");
      fold.append(element("summary", "", "Coordinates (JSON)"));
      block.replaceWith(fold);
      fold.append(block);
    }
  }

  private renderError(): void {
    const error = this.message.error ?? this.continueError;
    this.errorBox.hidden = !error;
    if (!error) return;
    if (!this.message.error) {
      // The Continue button under it asks again.
      this.errorBox.replaceChildren(
        element("strong", "", "The answer could not be continued."),
        ...[error.title, error.detail].filter(Boolean).map((line) => element("p", "answer-error-detail", line)),
      );
      return;
    }
    const children: HTMLElement[] = [element("strong", "", error.title)];
    if (error.detail) children.push(element("p", "answer-error-detail", error.detail));
    if (isRefusal(error)) {
      // The same request would be refused again; later requests leave it out.
      children.push(element("p", "answer-error-detail", REFUSED_QUESTION));
      if (error.code === CONTEXT_LENGTH_EXCEEDED) {
        const fresh = element("button", "text-button");
        fresh.type = "button";
        fresh.innerHTML = iconSvg("plus");
        fresh.append("New conversation");
        fresh.addEventListener("click", () => this.context.onNewConversation());
        children.push(fresh);
      }
    } else {
      const retry = element("button", "text-button");
      retry.type = "button";
      retry.innerHTML = iconSvg("retry");
      retry.append("Try again");
      retry.addEventListener("click", () => this.context.onRegenerate());
      children.push(retry);
    }
    this.errorBox.replaceChildren(...children);
  }

  private renderMeta(): void {
    const message = this.message;
    const parts: HTMLElement[] = [];
    if (message.status === "stopped") parts.push(element("span", "answer-flag", "Stopped"));
    if (message.finishReason === "length") {
      parts.push(element("span", "answer-flag", "Cut off at the length limit (see Settings)"));
      if (canContinue(message)) parts.push(this.continueButton());
    }
    const stats = answerStats(
      message.timings,
      message.usage,
      message.clientTtftMs,
      message.streamed,
      message.earlierParts,
    );
    if (message.status !== "streaming" && stats.summary.length > 0) {
      const details = element("details", "stats");
      const summary = element("summary", "", stats.summary.join(" · "));
      summary.setAttribute("aria-label", `Speed: ${stats.summary.join(", ")}. Show details`);
      const list = element("dl");
      for (const [label, value] of stats.details) list.append(element("dt", "", label), element("dd", "", value));
      details.append(summary, list);
      parts.push(details);
    }
    if (message.status !== "streaming") {
      if (message.text) parts.push(copyButton("Copy the answer", () => this.message.text));
      if (!message.error) parts.push(this.regenerateButton());
    }
    if (this.context.versions.count > 1) {
      parts.push(versionSwitcher(this.context.versions, "answer", this.context.showVersion));
    }
    this.meta.hidden = parts.length === 0;
    this.meta.replaceChildren(...parts);
  }

  private continueButton(): HTMLButtonElement {
    const button = element("button", "text-button answer-continue");
    button.type = "button";
    button.setAttribute("aria-label", "Continue the answer");
    button.innerHTML = iconSvg("next");
    button.append("Continue");
    button.addEventListener("click", () => this.context.onContinue());
    return button;
  }

  private regenerateButton(): HTMLButtonElement {
    const button = element("button", "icon-button small answer-regenerate");
    button.type = "button";
    button.setAttribute("aria-label", "Regenerate the answer");
    button.title = "Regenerate the answer";
    button.innerHTML = iconSvg("retry");
    button.addEventListener("click", () => this.context.onRegenerate());
    return button;
  }
}
