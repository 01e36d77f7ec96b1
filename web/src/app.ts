// Ties the page together: the current conversation, sending and streaming answers,
// continuing and stopping them, keeping conversations in the browser, and downloading one.
import {
  beginContinuation,
  canContinue,
  continuationRequest,
  restoreAnswer,
  type AnswerFigures,
} from "./answer_continuation";
import { toAnswerError, refusesKey } from "./answer_error";
import { answerFormatFor, answerFormatProblem } from "./answer_format";
import { addPiece } from "./answer_stream";
import { buildChatRequest, chatHeaders, type MediaUrls } from "./api/chat_request";
import { requestBytes } from "./api/request_size";
import { streamChatWhenFree } from "./api/busy_retry";
import { ChatError } from "./api/errors";
import { DEFAULT_SERVER_LIMITS, fetchServerLimits, type ServerLimits } from "./api/server_limits";
import type { ChatRequestBody } from "./api/types";
import {
  imagesBefore,
  newConversation,
  newId,
  rename,
  settleInterrupted,
  titleFor,
  videosBefore,
  videosOf,
  type AssistantMessage,
  type Conversation,
  type Message,
  type ResponseFormat,
  type UserMessage,
  type VideoRef,
} from "./conversation";
import { addMessage, showVersion, visibleBranch } from "./conversation_tree";
import { byId } from "./dom";
import { downloadConversation } from "./export";
import { ImageError } from "./images/prepare";
import { apiHeaders, loadSettings, saveSettings, type Settings } from "./settings";
import { BlobCache } from "./storage/blob_cache";
import {
  keepsVideo,
  MAX_STORED_VIDEO_BYTES,
  renameStored,
  writeMakingRoom,
  type ConversationStore,
} from "./storage/conversation_store";
import { formatBytes } from "./videos/formats";
import { VideoError } from "./videos/prepare";
import { BranchView } from "./ui/branch_view";
import { Composer, WAIT_FOR_THE_ANSWER, type PendingImage, type PendingVideo } from "./ui/composer";
import { ContextMeter, contextTokensUsed } from "./ui/context_meter";
import { HistoryDialog } from "./ui/history_dialog";
import { placeIcons } from "./ui/icons";
import { Lightbox } from "./ui/lightbox";
import { showVideoFacts } from "./ui/message_views";
import { ScrollFollower } from "./ui/scroll_follow";
import { SettingsDialog } from "./ui/settings_dialog";
import type { VersionStep } from "./ui/version_switcher";

const CURRENT_KEY = "qvl.currentConversation";
const DEFAULT_IMAGE_PROMPT = "Describe this image.";
const DEFAULT_VIDEO_PROMPT = "Describe what happens in this video.";
// A streaming answer is saved this often, so that a reload or a closed tab keeps most of it.
const SAVE_STREAMING_EVERY_MS = 2000;
// A typed API key is tried once typing pauses, not at every key press.
const KEY_CHECK_DELAY_MS = 400;

// Said under the question box while the server does not answer (stopped, or this device
// offline); the page asks again every RECONNECT_MS, and at once when the browser says
// it is back online.
const SERVER_UNREACHABLE = "Cannot reach the qvl server: it may have stopped, or this device is offline. Trying again…";
const RECONNECT_MS = 5000;
const KEY_NEEDED = "This server needs an API key. Enter it here; the page connects as soon as the server accepts it.";
const KEY_REFUSED = "The server did not accept this API key. Check it and enter it again.";

function defaultPrompt(images: number, videos: number): string {
  return videos > 0 ? DEFAULT_VIDEO_PROMPT : images > 0 ? DEFAULT_IMAGE_PROMPT : "";
}

export class App {
  private readonly cache: BlobCache;
  private readonly videos: BlobCache;
  private readonly composer: Composer;
  private readonly settingsDialog: SettingsDialog;
  private readonly lightbox = new Lightbox();
  private readonly messages = byId<HTMLElement>("messages");
  private readonly follower: ScrollFollower;
  private readonly branchView: BranchView;
  private readonly contextMeter = new ContextMeter(() => this.startNew());
  private readonly welcome = byId<HTMLElement>("welcome");
  private conversation = newConversation();
  private settings: Settings = loadSettings(localStorage);
  private model: string | undefined;
  private generation: { controller: AbortController; answerId: string } | null = null;
  private modelLoads = 0;
  private limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS };
  private limitLoads = 0;
  private keyCheck = 0;

  constructor(private readonly store: ConversationStore) {
    placeIcons(document);
    window.addEventListener("online", () => void this.loadModelName());
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
      imageCount: () => imagesBefore(this.branch(), this.branch().length).length,
      videoCount: () => videosBefore(this.branch(), this.branch().length).length,
      limits: () => this.limits,
      requestBytes: () =>
        requestBytes(
          (media) => this.buildRequest(this.branch(), this.conversation.systemPrompt, media),
          (id) => this.cache.blob(id),
        ),
      sendProblem: () => answerFormatProblem(this.settings.answerFormat, this.settings.jsonSchema),
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
      rename: (id, name) => this.renameConversation(id, name),
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
    this.branchView = new BranchView(this.messages, {
      cache: this.cache,
      videos: this.videos,
      openImage: (url, description) => this.lightbox.open(url, description),
      openVideo: (url, description) => this.lightbox.openVideo(url, description),
      onUnfold: () => this.follower.hold(),
      resend: (questionId, text) => this.resend(questionId, text),
      regenerate: (answerId) => this.regenerate(answerId),
      continueAnswer: (answerId) => this.continueAnswer(answerId),
      startNew: () => this.startNew(),
      showVersion: (messageId, step) => this.showVersion(messageId, step),
    });
  }

  /** The messages shown: what is sent, counted and drawn on. */
  private branch(): Message[] {
    return visibleBranch(this.conversation);
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
      if (this.composer.clearNote(SERVER_UNREACHABLE)) void this.loadLimits();
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
      if (attempt !== this.modelLoads) return;
      this.composer.showNote(SERVER_UNREACHABLE, "error");
      window.setTimeout(() => {
        if (attempt === this.modelLoads) void this.loadModelName();
      }, RECONNECT_MS);
    }
  }

  private askForKey(): void {
    this.settingsDialog.askForKey(this.settings.apiKey ? KEY_REFUSED : KEY_NEEDED);
  }

  /** The kind of the newest image or video in the conversation (a video where a message has
   * both): what the suggestions are for. */
  private latestMedia(): "image" | "video" | undefined {
    const messages = this.branch();
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
    this.branchView.clear();
    this.branchView.render(conversation);
    this.welcome.hidden = conversation.messages.length > 0;
    localStorage.setItem(CURRENT_KEY, conversation.id);
    this.follower.follow();
    this.composer.refreshPrompts();
    this.showContextUse();
  }

  private showContextUse(): void {
    this.contextMeter.show(contextTokensUsed(this.branch()), this.limits.contextTokens);
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
    addMessage(conversation, user, visibleBranch(conversation).at(-1));
    this.composer.refreshPrompts();
    this.welcome.hidden = true;
    this.branchView.render(conversation);
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
    if (conversation === this.conversation) await this.generate(user);
    else this.setBusy(false);
  }

  /** Writes a new answer to `question`, a message of the branch shown, after the ones it has. */
  private async generate(question: UserMessage): Promise<void> {
    const conversation = this.conversation;
    conversation.systemPrompt ??= this.settings.systemPrompt;
    const branch = visibleBranch(conversation);
    const history = branch.slice(0, branch.indexOf(question) + 1);
    const answer: AssistantMessage = { id: newId(), role: "assistant", text: "", status: "streaming" };
    const format = answerFormatFor(this.settings.answerFormat, question.responseFormat);
    if (format) answer.responseFormat = format;
    addMessage(conversation, answer, question);
    this.branchView.render(conversation, history.length);
    this.showContextUse();
    await this.stream(conversation, answer, history);
  }

  /** Writes on from the end of `answerId`, the latest answer of the branch shown, cut off
   * at the length limit, into the same answer. */
  private continueAnswer(answerId: string): void {
    if (this.generation) {
      this.composer.showNote(WAIT_FOR_THE_ANSWER);
      return;
    }
    const conversation = this.conversation;
    const branch = visibleBranch(conversation);
    // Only the latest answer: the turns after an earlier one answered it as it stands.
    const answer = branch.at(-1);
    if (answer?.id !== answerId || answer.role !== "assistant" || !canContinue(answer)) return;
    // The button goes as the answer is written again: from the keyboard, to the stop button.
    const fromKeyboard = document.activeElement?.matches(".answer-continue:focus-visible") ?? false;
    const before = beginContinuation(answer);
    this.follower.follow();
    void this.stream(conversation, answer, branch, before);
    if (fromKeyboard) this.composer.focusStop();
  }

  /** Streams the server's reply to `history` into `answer`: a new answer to the question
   * `history` ends with, or with `continued` (what the answer had before), the rest of
   * `answer`, which `history` ends with. */
  private async stream(
    conversation: Conversation,
    answer: AssistantMessage,
    history: Message[],
    continued?: AnswerFigures,
  ): Promise<void> {
    const view = this.branchView.answer(answer.id)!;
    view.update(answer);
    const continuedFrom = answer.text;
    const controller = new AbortController();
    this.generation = { controller, answerId: answer.id };
    this.setBusy(true);
    void this.persist(conversation);

    const started = performance.now();
    let body: ChatRequestBody | undefined;
    try {
      body = await this.buildRequest(history, conversation.systemPrompt, {
        image: (id) => this.cache.dataUrl(id),
        video: (video) => this.videos.dataUrl(video.id, video.type),
      });
      if (continued) body = continuationRequest(body);
      const headers = chatHeaders(this.settings, conversation.id);
      let savedAt = performance.now();
      const waiting = (ms: number) =>
        view.setWaiting(ms ? `The server is busy: asking again in ${Math.ceil(ms / 1000)} s…` : "");
      for await (const piece of streamChatWhenFree(body, controller.signal, headers, waiting)) {
        if (piece.progress) view.setProgress(piece.progress);
        addPiece(answer, piece, performance.now() - started);
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
        const failure = toAnswerError(error, body, history);
        if (continued) {
          // The answer stays what it was, not a failed one, which later requests would leave out.
          restoreAnswer(answer, continued);
          view.showContinueError(failure);
        } else {
          answer.status = "error";
          answer.error = failure;
        }
        if (error instanceof ChatError && refusesKey(error.status) && conversation === this.conversation) {
          this.askForKey();
        }
        // No HTTP answer (server stopped, network gone): the note under the question box
        // says so and clears once the server answers again, so the person knows when to retry.
        if (error instanceof ChatError && error.status === 0) void this.loadModelName();
      }
    }
    // Stopped before it said anything, a continuation leaves the answer cut off as it was.
    if (continued && answer.status === "stopped" && answer.text === continuedFrom) restoreAnswer(answer, continued);
    if (this.generation?.answerId === answer.id) {
      this.generation = null;
      this.setBusy(false);
    }
    view.update(answer);
    this.noteVideoTimings(history, answer);
    if (conversation === this.conversation) this.showContextUse();
    await this.persist(conversation);
  }

  /** The request for `history`, the branch shown up to a question, of a conversation
   * started with `systemPrompt`. */
  private buildRequest(history: Message[], systemPrompt: string | undefined, media: MediaUrls) {
    return buildChatRequest(history, systemPrompt, this.settings, this.limits, media, this.model);
  }

  /** Keeps what the server made of each video (sampled frames, tokens) with the video. */
  private noteVideoTimings(history: Message[], answer: AssistantMessage): void {
    const timings = answer.timings?.videos;
    if (!timings) return;
    videosBefore(history, history.length).forEach((video, i) => {
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

  /** Another answer to the question of `answerId`, kept beside the ones it had. */
  private regenerate(answerId: string): void {
    const answer = this.conversation.messages.find((m) => m.id === answerId);
    const question = this.conversation.messages.find((m) => m.id === answer?.parentId);
    if (this.generation || question?.role !== "user") {
      this.composer.showNote(WAIT_FOR_THE_ANSWER);
      return;
    }
    void this.generate(question);
  }

  /** Sends the question `questionId` with new text as a new version of it, after the
   * messages before it; returns false when that cannot happen now. */
  private resend(questionId: string, text: string): boolean {
    const question = this.conversation.messages.find((m): m is UserMessage => m.id === questionId && m.role === "user");
    if (this.generation || !question) {
      this.composer.showNote(WAIT_FOR_THE_ANSWER);
      return false;
    }
    const edited: UserMessage = {
      id: newId(),
      role: "user",
      text: text || defaultPrompt(question.images.length, videosOf(question).length),
      images: question.images.map((image) => ({ ...image })),
    };
    if (!edited.text) return false;
    if (question.videos) edited.videos = question.videos.map((video) => ({ ...video }));
    // A suggestion's response format belongs to its own words, as in the composer.
    if (question.responseFormat && edited.text === question.text) edited.responseFormat = question.responseFormat;
    const conversation = this.conversation;
    addMessage(
      conversation,
      edited,
      conversation.messages.find((m) => m.id === question.parentId),
    );
    this.branchView.render(conversation, visibleBranch(conversation).indexOf(edited));
    this.follower.follow();
    this.composer.focus();
    void this.generate(edited);
    return true;
  }

  /** Shows another version of a message, with the branch that follows it. */
  private showVersion(messageId: string, step: VersionStep): void {
    const conversation = this.conversation;
    const message = conversation.messages.find((m) => m.id === messageId);
    if (this.generation || !message) {
      this.composer.showNote(WAIT_FOR_THE_ANSWER);
      return;
    }
    const shown = showVersion(conversation, message, step);
    if (!shown) return;
    const index = visibleBranch(conversation).indexOf(shown);
    this.branchView.render(conversation, index);
    this.branchView.focusVersionStep(index, step);
    this.composer.refreshPrompts();
    this.showContextUse();
    // Which version is shown is not news: the conversation keeps its place in the history.
    void this.persist(conversation, false);
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

  private async renameConversation(id: string, name: string): Promise<void> {
    // The conversation on screen is saved from the page's copy, which must hold the name.
    if (id !== this.conversation.id) return renameStored(this.store, id, name);
    rename(this.conversation, name);
    await this.persist(this.conversation, false);
  }

  private async removeConversation(id: string): Promise<void> {
    if (id === this.conversation.id) this.startNew();
    await this.store.remove(id);
  }

  private async persist(conversation: Conversation, changed = true): Promise<void> {
    if (changed) conversation.updatedAt = Date.now();
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
