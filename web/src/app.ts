// Ties the page together: the current conversation, sending and streaming answers,
// stopping them, and keeping conversations in the browser.
import { buildChatRequest } from "./api/chat_request";
import { streamChat } from "./api/chat_stream";
import { ChatError } from "./api/errors";
import {
  imagesBefore,
  newConversation,
  newId,
  settleInterrupted,
  titleFor,
  type AnswerError,
  type AssistantMessage,
  type Conversation,
  type UserMessage,
} from "./conversation";
import { byId } from "./dom";
import { ImageCache } from "./images/image_cache";
import { ImageError } from "./images/prepare";
import { apiHeaders, loadSettings, saveSettings, type Settings } from "./settings";
import { writeMakingRoom, type ConversationStore } from "./storage/conversation_store";
import { Composer, type PendingImage } from "./ui/composer";
import { HistoryDialog } from "./ui/history_dialog";
import { placeIcons } from "./ui/icons";
import { AnswerView, userMessageView } from "./ui/message_views";
import { SettingsDialog } from "./ui/settings_dialog";

const CURRENT_KEY = "qvl.currentConversation";
const DEFAULT_IMAGE_PROMPT = "Describe this image.";
// Within this many pixels of the bottom, the view follows a growing answer.
const FOLLOW_DISTANCE_PX = 80;

function toAnswerError(error: unknown): AnswerError {
  if (error instanceof ChatError) return { title: error.title, detail: error.detail };
  if (error instanceof ImageError) return { title: error.message, detail: "" };
  return { title: "Something went wrong in the page.", detail: error instanceof Error ? error.message : String(error) };
}

export class App {
  private readonly cache: ImageCache;
  private readonly composer: Composer;
  private readonly messages = byId<HTMLDivElement>("messages");
  private readonly scroller = byId<HTMLElement>("scroller");
  private readonly welcome = byId<HTMLElement>("welcome");
  private conversation = newConversation();
  private settings: Settings = loadSettings(localStorage);
  private model: string | undefined;
  private generation: { controller: AbortController; answerId: string } | null = null;
  private answerViews = new Map<string, AnswerView>();
  private followBottom = true;

  constructor(private readonly store: ConversationStore) {
    placeIcons(document);
    this.cache = new ImageCache(store);
    this.composer = new Composer({
      send: (text, images) => void this.send(text, images),
      stop: () => this.stop(),
      hasImages: () => imagesBefore(this.conversation, this.conversation.messages.length).length > 0,
    });
    const settingsDialog = new SettingsDialog(this.settings, (settings) => {
      const keyChanged = settings.apiKey !== this.settings.apiKey;
      this.settings = settings;
      saveSettings(localStorage, settings);
      if (keyChanged) void this.loadModelName();
    });
    const history = new HistoryDialog({
      list: () => this.store.list(),
      currentId: () => this.conversation.id,
      open: (id) => void this.openConversation(id),
      remove: (id) => this.removeConversation(id),
      startNew: () => this.startNew(),
    });
    byId("settings-button").addEventListener("click", () => settingsDialog.open());
    byId("history-button").addEventListener("click", () => void history.open());
    byId("new-button").addEventListener("click", () => this.startNew());
    this.scroller.addEventListener("scroll", () => {
      const { scrollHeight, scrollTop, clientHeight } = this.scroller;
      this.followBottom = scrollHeight - scrollTop - clientHeight < FOLLOW_DISTANCE_PX;
    });
    new ResizeObserver(() => {
      if (this.followBottom) this.scrollToEnd();
    }).observe(this.messages);
  }

  async start(): Promise<void> {
    const lastId = localStorage.getItem(CURRENT_KEY);
    const saved = lastId ? await this.store.get(lastId).catch(() => undefined) : undefined;
    this.show(saved ? settleInterrupted(saved) : newConversation());
    this.composer.focus();
    void this.loadModelName();
  }

  private async loadModelName(): Promise<void> {
    try {
      const response = await fetch("/v1/models", { headers: apiHeaders(this.settings) });
      if (!response.ok) return;
      const body = (await response.json()) as { data?: { id?: unknown }[] };
      const id = body.data?.[0]?.id;
      if (typeof id !== "string" || !id) return;
      this.model = id;
      byId("model-name").textContent = id.split("/").pop() ?? id;
    } catch {
      // The first request will explain an unreachable server in its own words.
    }
  }

  private show(conversation: Conversation): void {
    this.cache.releaseAll();
    this.conversation = conversation;
    this.answerViews.clear();
    this.messages.replaceChildren();
    conversation.messages.forEach((_, index) => this.appendView(index));
    this.welcome.hidden = conversation.messages.length > 0;
    localStorage.setItem(CURRENT_KEY, conversation.id);
    this.followBottom = true;
    this.scrollToEnd();
  }

  private appendView(index: number): void {
    const message = this.conversation.messages[index];
    const earlierImages = imagesBefore(this.conversation, index);
    if (message.role === "user") {
      this.messages.append(userMessageView(message, this.cache, earlierImages.length + 1));
      return;
    }
    const view = new AnswerView(message, {
      images: earlierImages,
      cache: this.cache,
      onRetry: () => void this.retry(message.id),
    });
    this.answerViews.set(message.id, view);
    this.messages.append(view.element);
  }

  private async send(text: string, images: PendingImage[]): Promise<void> {
    const conversation = this.conversation;
    const user: UserMessage = {
      id: newId(),
      role: "user",
      text: text || (images.length > 0 ? DEFAULT_IMAGE_PROMPT : ""),
      images: images.map(({ id, name, width, height }) => ({ id, name, width, height })),
    };
    for (const image of images) this.cache.adopt(image.id, image.blob, image.url);
    conversation.messages.push(user);
    this.welcome.hidden = true;
    this.appendView(conversation.messages.length - 1);
    this.followBottom = true;
    this.scrollToEnd();
    this.composer.setBusy(true);
    try {
      for (const image of images) {
        await writeMakingRoom(this.store, conversation.id, () => this.store.putImage(image.id, image.blob));
      }
    } catch {
      this.composer.showNote("This browser's storage is full: the images will not be kept after a reload.", "error");
    }
    if (conversation === this.conversation) await this.generate();
    else this.composer.setBusy(false);
  }

  private async generate(): Promise<void> {
    const conversation = this.conversation;
    const history: Conversation = { ...conversation, messages: [...conversation.messages] };
    const answer: AssistantMessage = { id: newId(), role: "assistant", text: "", status: "streaming" };
    conversation.messages.push(answer);
    this.appendView(conversation.messages.length - 1);
    const view = this.answerViews.get(answer.id)!;
    const controller = new AbortController();
    this.generation = { controller, answerId: answer.id };
    this.composer.setBusy(true);
    void this.persist(conversation);

    const started = performance.now();
    try {
      const body = await buildChatRequest(history, this.settings, (id) => this.cache.dataUrl(id), this.model);
      for await (const piece of streamChat(body, controller.signal, apiHeaders(this.settings))) {
        if (piece.text) {
          answer.clientTtftMs ??= performance.now() - started;
          answer.text += piece.text;
        }
        if (piece.finishReason) answer.finishReason = piece.finishReason;
        if (piece.usage) answer.usage = piece.usage;
        if (piece.timings) answer.timings = piece.timings;
        view.update(answer);
      }
      answer.status = controller.signal.aborted || answer.finishReason === "cancelled" ? "stopped" : "done";
    } catch (error) {
      if (controller.signal.aborted) {
        answer.status = "stopped";
      } else {
        answer.status = "error";
        answer.error = toAnswerError(error);
      }
    }
    if (this.generation?.answerId === answer.id) {
      this.generation = null;
      this.composer.setBusy(false);
    }
    view.update(answer);
    await this.persist(conversation);
  }

  private stop(): void {
    this.generation?.controller.abort();
  }

  private async retry(answerId: string): Promise<void> {
    const messages = this.conversation.messages;
    if (this.generation || messages.at(-1)?.id !== answerId) {
      this.composer.showNote("Only the latest answer can be tried again.");
      return;
    }
    messages.pop();
    this.answerViews.get(answerId)?.element.remove();
    this.answerViews.delete(answerId);
    await this.generate();
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

  private scrollToEnd(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}
