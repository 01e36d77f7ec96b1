// The messages of the branch shown, one view each. After a new version is chosen only the
// views from that message on are drawn again, so the page does not jump above it.
import { imagesBefore, videosBefore, type Conversation, type Message } from "../conversation";
import { versionPosition, visibleBranch } from "../conversation_tree";
import type { BlobCache } from "../storage/blob_cache";
import { announce } from "./announcer";
import { AnswerView, userMessageView } from "./message_views";
import { focusVersionStep, type VersionStep } from "./version_switcher";

export interface BranchHandlers {
  /** Images and video posters. */
  cache: BlobCache;
  videos: BlobCache;
  openImage(url: string, description: string): void;
  openVideo(url: string, description: string): void;
  /** A long question was unfolded to be read. */
  onUnfold(): void;
  /** Sends a new version of the question; false when that cannot happen now. */
  resend(questionId: string, text: string): boolean;
  regenerate(answerId: string): void;
  /** Writes on from the end of an answer cut off at the length limit. */
  continueAnswer(answerId: string): void;
  startNew(): void;
  showVersion(messageId: string, step: VersionStep): void;
}

export class BranchView {
  // One per message of the branch drawn, in its order.
  private readonly views: HTMLElement[] = [];
  private readonly answers = new Map<string, AnswerView>();

  constructor(
    private readonly root: HTMLElement,
    private readonly handlers: BranchHandlers,
  ) {}

  /** Draws the branch shown from its message `from` on (by default, the messages not
   * drawn yet), keeping the views before it. */
  render(conversation: Conversation, from = this.views.length): void {
    for (const view of this.views.splice(from)) view.remove();
    const branch = visibleBranch(conversation);
    for (const [id, view] of this.answers) {
      if (!view.element.isConnected) this.answers.delete(id);
    }
    for (let index = from; index < branch.length; index++) {
      const view = this.messageView(conversation, branch, index);
      this.views.push(view);
      this.root.append(view);
    }
  }

  clear(): void {
    this.views.length = 0;
    this.answers.clear();
    this.root.replaceChildren();
  }

  answer(id: string): AnswerView | undefined {
    return this.answers.get(id);
  }

  /** After a switch drew message `index` again: the focus on its switcher, as before. */
  focusVersionStep(index: number, step: VersionStep): void {
    const view = this.views[index];
    if (view) focusVersionStep(view, step);
  }

  private messageView(conversation: Conversation, branch: Message[], index: number): HTMLElement {
    const message = branch[index];
    const earlierImages = imagesBefore(branch, index);
    const earlierVideos = videosBefore(branch, index);
    const handlers = this.handlers;
    const versions = versionPosition(conversation, message);
    const showVersion = (step: VersionStep) => handlers.showVersion(message.id, step);
    if (message.role === "user") {
      return userMessageView(message, {
        cache: handlers.cache,
        videos: handlers.videos,
        firstImageNumber: earlierImages.length + 1,
        firstVideoNumber: earlierVideos.length + 1,
        openImage: handlers.openImage,
        openVideo: handlers.openVideo,
        resend: (text) => handlers.resend(message.id, text),
        onUnfold: handlers.onUnfold,
        versions,
        showVersion,
      });
    }
    const view = new AnswerView(message, {
      images: earlierImages,
      hasVideo: earlierVideos.length > 0,
      cache: handlers.cache,
      onRegenerate: () => handlers.regenerate(message.id),
      onContinue: () => handlers.continueAnswer(message.id),
      onNewConversation: handlers.startNew,
      announce,
      versions,
      showVersion,
    });
    this.answers.set(message.id, view);
    return view.element;
  }
}
