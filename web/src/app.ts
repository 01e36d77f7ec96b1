// Ties the page together: the current conversation, sending and streaming answers,
// stopping them, keeping conversations in the browser, and downloading one.
import { buildChatRequest, chatHeaders, videoForParam } from "./api/chat_request";
import { streamChat } from "./api/chat_stream";
import { ChatError } from "./api/errors";
import { DEFAULT_SERVER_LIMITS, fetchServerLimits, type ServerLimits } from "./api/server_limits";
import type { ChatRequestBody } from "./api/types";
import {
  imagesBefore,
  lastQuestion,
  newConversation,
  newId,
  settleInterrupted,
  titleFor,
  videosBefore,
  videosOf,
  type AnswerError,
  type AssistantMessage,
  type Conversation,
  type ResponseFormat,
  type UserMessage,
  type VideoRef,
} from "./conversation";
import { byId } from "./dom";
import { downloadConversation } from "./export";
import { ImageError } from "./images/prepare";
import { apiHeaders, loadSettings, saveSettings, type Settings } from "./settings";
import { BlobCache } from "./storage/blob_cache";
import {
  keepsVideo,
  MAX_STORED_VIDEO_BYTES,
  writeMakingRoom,
  type ConversationStore,
} from "./storage/conversation_store";
import { countChunk } from "./timings";
import { formatBytes } from "./videos/formats";
import { VideoError } from "./videos/prepare";
import { Composer, WAIT_FOR_THE_ANSWER, type PendingImage, type PendingVideo } from "./ui/composer";
import { ContextMeter, contextTokensUsed } from "./ui/context_meter";
import { HistoryDialog } from "./ui/history_dialog";
import { placeIcons } from "./ui/icons";
import { Lightbox } from "./ui/lightbox";
import { AnswerView, showVideoFacts, userMessageView } from "./ui/message_views";
import { ScrollFollower } from "./ui/scroll_follow";
import { SettingsDialog } from "./ui/settings_dialog";

const CURRENT_KEY = "qvl.currentConversation";
const DEFAULT_IMAGE_PROMPT = "Describe this image.";
const DEFAULT_VIDEO_PROMPT = "Describe what happens in this video.";
// A streaming answer is saved this often, so that a reload or a closed tab keeps most of it.
const SAVE_STREAMING_EVERY_MS = 2000;
// A typed API key is tried once typing pauses, not at every key press.
const KEY_CHECK_DELAY_MS = 400;

const KEY_NEEDED = "This server needs an API key. Enter it here; the page connects as soon as the server accepts it.";
const KEY_REFUSED = "The server did not accept this API key. Check it and enter it again.";

function refusesKey(status: number): boolean {
  return status === 401 || status === 403;
}

function defaultPrompt(images: number, videos: number): string {
  return videos > 0 ? DEFAULT_VIDEO_PROMPT : images > 0 ? DEFAULT_IMAGE_PROMPT : "";
}

/** A 413 names the file: the one the server's `param` points at, else the request's videos. */
function tooLargeTitle(
  body: ChatRequestBody | undefined,
  conversation: Conversation,
  param: string,
): string | undefined {
  if (!body) return undefined;
  const named = videoForParam(body, conversation, param);
  const videos = named ? [named] : param ? [] : videosBefore(conversation, conversation.messages.length);
  if (videos.length === 0) return undefined;
  const names = videos.map((video) => `"${video.name}" (${formatBytes(video.bytes)})`).join(", ");
  return videos.length === 1
    ? `The video ${names} is too large for this server. Trim or compress it; the server's operator can raise the limit.`
    : `The videos ${names} are too large for this server together. Start a new conversation with fewer or smaller videos.`;
}

function toAnswerError(error: unknown, body?: ChatRequestBody, conversation?: Conversation): AnswerError {
  if (error instanceof ChatError) {
    const title = error.status === 413 && conversation ? tooLargeTitle(body, conversation, error.param) : undefined;
    const answer: AnswerError = { title: title ?? error.title, detail: error.detail };
    if (error.status) answer.status = error.status;
    return answer;
  }
  if (error instanceof ImageError || error instanceof VideoError) return { title: error.message, detail: "" };
  return { title: "Something went wrong in the page.", detail: error instanceof Error ? error.message : String(error) };
}

export class App {
  private readonly cache: BlobCache;
  private readonly videos: BlobCache;
  private readonly composer: Composer;
  private readonly settingsDialog: SettingsDialog;
  private readonly lightbox = new Lightbox();
  private readonly messages = byId<HTMLDivElement>("messages");
  private readonly follower: ScrollFollower;
  private readonly contextMeter = new ContextMeter(() => this.startNew());
  private readonly welcome = byId<HTMLElement>("welcome");
  private conversation = newConversation();
  private settings: Settings = loadSettings(localStorage);
  private model: string | undefined;
  private generation: { controller: AbortController; answerId: string } | null = null;
  private answerViews = new Map<string, AnswerView>();
  private modelLoads = 0;
  private limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS };
  private limitLoads = 0;
  private keyCheck = 0;

  constructor(private readonly store: ConversationStore) {
    placeIcons(document);
    this.cache = new BlobCache(
      (id) => store.getImage(id),
      () =>
        new ImageError("An image of this conversation is no longer stored in this browser. Start a new conversation."),
    );
    this.videos = new BlobCache(
      (id) => store.getVideo(id),
      () =>
        new VideoError(
          "A video of this conversation is no longer stored in this browser, so the conversation cannot go on. Start a new conversation with the file.",
        ),
    );
    this.composer = new Composer({
      send: (text, images, videos, responseFormat) => void this.send(text, images, videos, responseFormat),
      stop: () => this.stop(),
      openImage: (url, description) => this.lightbox.open(url, description),
      latestMedia: () => this.latestMedia(),
      imageCount: () => imagesBefore(this.conversation, this.conversation.messages.length).length,
      videoCount: () => videosBefore(this.conversation, this.conversation.messages.length).length,
      limits: () => this.limits,
    });
    this.settingsDialog = new SettingsDialog(
      this.settings,
      (settings) => {
        const keyChanged = settings.apiKey !== this.settings.apiKey;
        this.settings = settings;
        saveSettings(localStorage, settings);
        if (keyChanged) {
          clearTimeout(this.keyCheck);
          this.keyCheck = window.setTimeout(() => {
            void this.loadModelName();
            void this.loadLimits();
          }, KEY_CHECK_DELAY_MS);
        }
      },
      () => this.conversation.systemPrompt,
    );
    const history = new HistoryDialog({
      list: () => this.store.list(),
      current: () => this.conversation,
      open: (id) => void this.openConversation(id),
      remove: (id) => this.removeConversation(id),
      startNew: () => this.startNew(),
      download: (format) => downloadConversation(this.conversation, format, this.model),
    });
    byId("settings-button").addEventListener("click", () => this.settingsDialog.open());
    byId("history-button").addEventListener("click", () => void history.open());
    byId("new-button").addEventListener("click", () => this.startNew());
    this.follower = new ScrollFollower(
      byId("scroller"),
      this.messages,
      byId<HTMLButtonElement>("jump-button"),
      byId("prompt"),
    );
  }

  async start(): Promise<void> {
    const lastId = localStorage.getItem(CURRENT_KEY);
    const saved = lastId ? await this.store.get(lastId).catch(() => undefined) : undefined;
    this.show(saved ? settleInterrupted(saved) : newConversation());
    this.composer.focus();
    void this.loadModelName();
    void this.loadLimits();
  }

  /** The server's limits for the checks before upload; until they come (or when the server
   * has none to give), qvl serve's defaults. */
  private async loadLimits(): Promise<void> {
    const attempt = ++this.limitLoads;
    const answer = await fetchServerLimits(apiHeaders(this.settings));
    if (attempt !== this.limitLoads) return;
    if (answer.kind === "loading") {
      window.setTimeout(() => {
        if (attempt === this.limitLoads) void this.loadLimits();
      }, answer.retryMs);
    } else if (answer.kind === "limits") {
      this.limits = answer.limits;
      this.settingsDialog.setServerLimits(answer.limits);
      this.settingsDialog.setSamplingDefaults(answer.sampling);
      this.showContextUse();
    }
  }

  /** Shows the model's name; also how the page learns at once that it needs a key. */
  private async loadModelName(): Promise<void> {
    // Answers to earlier keys may arrive late: only the latest attempt counts.
    const attempt = ++this.modelLoads;
    try {
      const response = await fetch("/v1/models", { headers: apiHeaders(this.settings) });
      if (attempt !== this.modelLoads) return;
      if (refusesKey(response.status)) {
        this.askForKey();
        return;
      }
      if (!response.ok) return;
      if (this.settingsDialog.keyAccepted()) {
        this.composer.showNote("The server accepted the API key.");
        this.composer.focus();
      }
      const body = (await response.json()) as { data?: { id?: unknown }[] };
      const id = body.data?.[0]?.id;
      if (typeof id !== "string" || !id || attempt !== this.modelLoads) return;
      this.model = id;
      byId("model-name").textContent = id.split("/").pop() ?? id;
    } catch {
      // The first request will explain an unreachable server in its own words.
    }
  }

  private askForKey(): void {
    this.settingsDialog.askForKey(this.settings.apiKey ? KEY_REFUSED : KEY_NEEDED);
  }

  /** The kind of the newest image or video in the conversation (a video where a message has
   * both): what the suggestions are for. */
  private latestMedia(): "image" | "video" | undefined {
    const messages = this.conversation.messages;
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i];
      if (message.role !== "user") continue;
      if (videosOf(message).length > 0) return "video";
      if (message.images.length > 0) return "image";
    }
    return undefined;
  }

  private show(conversation: Conversation): void {
    this.cache.releaseAll();
    this.videos.releaseAll();
    this.conversation = conversation;
    this.answerViews.clear();
    this.messages.replaceChildren();
    conversation.messages.forEach((_, index) => this.appendView(index));
    this.welcome.hidden = conversation.messages.length > 0;
    localStorage.setItem(CURRENT_KEY, conversation.id);
    this.follower.follow();
    this.composer.refreshPrompts();
    this.showContextUse();
  }

  private showContextUse(): void {
    this.contextMeter.show(contextTokensUsed(this.conversation), this.limits.contextTokens);
  }

  private appendView(index: number): void {
    const message = this.conversation.messages[index];
    const earlierImages = imagesBefore(this.conversation, index);
    const earlierVideos = videosBefore(this.conversation, index);
    if (message.role === "user") {
      const view = userMessageView(message, {
        cache: this.cache,
        videos: this.videos,
        firstImageNumber: earlierImages.length + 1,
        firstVideoNumber: earlierVideos.length + 1,
        openImage: (url, description) => this.lightbox.open(url, description),
        openVideo: (url, description) => this.lightbox.openVideo(url, description),
        resend: (text) => this.resend(message.id, text),
        onUnfold: () => this.follower.hold(),
      });
      this.messages.append(view);
      return;
    }
    const view = new AnswerView(message, {
      images: earlierImages,
      hasVideo: earlierVideos.length > 0,
      cache: this.cache,
      onRegenerate: () => void this.regenerate(message.id),
    });
    this.answerViews.set(message.id, view);
    this.messages.append(view.element);
  }

  private async send(
    text: string,
    images: PendingImage[],
    videos: PendingVideo[],
    responseFormat?: ResponseFormat,
  ): Promise<void> {
    const conversation = this.conversation;
    const user: UserMessage = {
      id: newId(),
      role: "user",
      text: text || defaultPrompt(images.length, videos.length),
      images: images.map(({ id, name, width, height }) => ({ id, name, width, height })),
    };
    if (videos.length > 0) user.videos = videos.map(videoRef);
    if (responseFormat) user.responseFormat = responseFormat;
    for (const image of images) this.cache.adopt(image.id, image.blob, image.url);
    for (const [i, video] of videos.entries()) {
      this.videos.adopt(video.id, video.blob);
      const posterId = user.videos?.[i].posterId;
      if (posterId && video.poster) this.cache.adopt(posterId, video.poster, video.posterUrl);
    }
    conversation.messages.push(user);
    this.composer.refreshPrompts();
    this.welcome.hidden = true;
    this.appendView(conversation.messages.length - 1);
    this.follower.follow();
    this.setBusy(true);
    try {
      for (const image of images) {
        await writeMakingRoom(this.store, conversation.id, () => this.store.putImage(image.id, image.blob));
      }
      for (const [i, video] of videos.entries()) {
        const ref = user.videos![i];
        if (ref.posterId && video.poster) {
          const poster = video.poster;
          await writeMakingRoom(this.store, conversation.id, () => this.store.putImage(ref.posterId!, poster));
        }
        if (ref.stored) {
          await writeMakingRoom(this.store, conversation.id, () => this.store.putVideo(ref.id, video.blob));
        }
      }
    } catch {
      this.composer.showNote(
        "This browser's storage is full: the images and videos will not be kept after a reload.",
        "error",
      );
    }
    const unkept = videos.filter((video) => !keepsVideo(video.bytes));
    if (unkept.length > 0) {
      this.composer.showNote(
        `${unkept.map((video) => `"${video.name}"`).join(", ")} ${unkept.length === 1 ? "is" : "are"} larger than ${formatBytes(MAX_STORED_VIDEO_BYTES)}: sent, but not kept in this browser, so this conversation cannot go on after a reload.`,
      );
    }
    if (conversation === this.conversation) await this.generate();
    else this.setBusy(false);
  }

  private async generate(): Promise<void> {
    const conversation = this.conversation;
    conversation.systemPrompt ??= this.settings.systemPrompt;
    const history: Conversation = { ...conversation, messages: [...conversation.messages] };
    const answer: AssistantMessage = { id: newId(), role: "assistant", text: "", status: "streaming" };
    const responseFormat = lastQuestion(conversation)?.responseFormat;
    if (responseFormat) answer.responseFormat = responseFormat;
    conversation.messages.push(answer);
    this.appendView(conversation.messages.length - 1);
    const view = this.answerViews.get(answer.id)!;
    const controller = new AbortController();
    this.generation = { controller, answerId: answer.id };
    this.setBusy(true);
    void this.persist(conversation);

    const started = performance.now();
    let body: ChatRequestBody | undefined;
    try {
      body = await buildChatRequest(
        history,
        this.settings,
        this.limits,
        { image: (id) => this.cache.dataUrl(id), video: (video) => this.videos.dataUrl(video.id, video.type) },
        this.model,
      );
      const headers = chatHeaders(this.settings, conversation.id);
      let savedAt = performance.now();
      for await (const piece of streamChat(body, controller.signal, headers)) {
        if (piece.text) {
          const elapsed = performance.now() - started;
          answer.clientTtftMs ??= elapsed;
          answer.streamed = countChunk(answer.streamed, piece.text, elapsed - answer.clientTtftMs);
          answer.text += piece.text;
        }
        if (piece.finishReason) answer.finishReason = piece.finishReason;
        if (piece.usage) answer.usage = piece.usage;
        if (piece.timings) answer.timings = piece.timings;
        view.update(answer);
        if (performance.now() - savedAt >= SAVE_STREAMING_EVERY_MS) {
          savedAt = performance.now();
          void this.persist(conversation);
        }
      }
      answer.status = controller.signal.aborted || answer.finishReason === "cancelled" ? "stopped" : "done";
    } catch (error) {
      if (controller.signal.aborted) {
        answer.status = "stopped";
      } else {
        answer.status = "error";
        answer.error = toAnswerError(error, body, history);
        if (error instanceof ChatError && refusesKey(error.status) && conversation === this.conversation) {
          this.askForKey();
        }
      }
    }
    if (this.generation?.answerId === answer.id) {
      this.generation = null;
      this.setBusy(false);
    }
    view.update(answer);
    this.noteVideoTimings(history, answer);
    if (conversation === this.conversation) this.showContextUse();
    await this.persist(conversation);
  }

  /** Keeps what the server made of each video (sampled frames, tokens) with the video. */
  private noteVideoTimings(history: Conversation, answer: AssistantMessage): void {
    const timings = answer.timings?.videos;
    if (!timings) return;
    videosBefore(history, history.messages.length).forEach((video, i) => {
      const timing = timings[i];
      if (!timing) return;
      video.timing = { ...timing };
      delete video.timing.cached;
      showVideoFacts(this.messages, video);
    });
  }

  private stop(): void {
    this.generation?.controller.abort();
  }

  private setBusy(busy: boolean): void {
    this.composer.setBusy(busy);
    this.messages.classList.toggle("is-busy", busy);
  }

  /** A new answer to the latest question, in place of the one there. */
  private async regenerate(answerId: string): Promise<void> {
    const messages = this.conversation.messages;
    if (this.generation || messages.at(-1)?.id !== answerId) {
      this.composer.showNote("Only the latest answer can be written again, once it is finished.");
      return;
    }
    this.removeMessagesFrom(messages.length - 1);
    await this.generate();
  }

  /** Sends the latest question again with new text, dropping the answer it had. */
  private resend(questionId: string, text: string): boolean {
    const question = lastQuestion(this.conversation);
    if (this.generation || question?.id !== questionId) {
      this.composer.showNote(this.generation ? WAIT_FOR_THE_ANSWER : "Only the latest question can be edited.");
      return false;
    }
    const edited = text || defaultPrompt(question.images.length, videosOf(question).length);
    if (!edited) return false;
    // A suggestion's response format belongs to its own words, as in the composer.
    if (edited !== question.text) delete question.responseFormat;
    question.text = edited;
    this.removeMessagesFrom(this.conversation.messages.indexOf(question) + 1);
    this.follower.follow();
    void this.generate();
    return true;
  }

  private removeMessagesFrom(index: number): void {
    for (const removed of this.conversation.messages.splice(index)) {
      this.answerViews.get(removed.id)?.element.remove();
      this.answerViews.delete(removed.id);
    }
    this.showContextUse();
  }

  private startNew(): void {
    this.stop();
    this.show(newConversation());
    this.composer.focus();
  }

  private async openConversation(id: string): Promise<void> {
    if (id === this.conversation.id) return;
    this.stop();
    const conversation = await this.store.get(id);
    if (conversation) this.show(settleInterrupted(conversation));
  }

  private async removeConversation(id: string): Promise<void> {
    if (id === this.conversation.id) this.startNew();
    await this.store.remove(id);
  }

  private async persist(conversation: Conversation): Promise<void> {
    conversation.updatedAt = Date.now();
    conversation.title = titleFor(conversation);
    try {
      const dropped = await writeMakingRoom(this.store, conversation.id, () => this.store.save(conversation));
      if (dropped > 0)
        this.composer.showNote(`Browser storage was full: removed the ${dropped} oldest conversation(s).`);
    } catch (error) {
      this.composer.showNote(`This conversation could not be saved in the browser (${String(error)}).`, "error");
    }
  }
}

function videoRef(video: PendingVideo): VideoRef {
  const ref: VideoRef = {
    id: video.id,
    name: video.name,
    type: video.type,
    bytes: video.bytes,
    stored: keepsVideo(video.bytes),
  };
  if (video.durationS !== undefined) ref.durationS = video.durationS;
  if (video.width !== undefined && video.height !== undefined) {
    ref.width = video.width;
    ref.height = video.height;
  }
  if (video.poster) ref.posterId = newId();
  return ref;
}
