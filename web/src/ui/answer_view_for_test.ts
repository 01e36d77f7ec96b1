// An AnswerView on its own, as the page's tests build it: no images, one version, and
// what it announces handed to `announce`, a new conversation asked of `onNewConversation`.
import type { AssistantMessage } from "../conversation";
import type { BlobCache } from "../storage/blob_cache";
import { AnswerView } from "./message_views";

export function answerViewFor(
  message: AssistantMessage,
  announce: (text: string) => void = () => {},
  onNewConversation: () => void = () => {},
): AnswerView {
  return new AnswerView(message, {
    images: [],
    hasVideo: false,
    cache: {} as BlobCache,
    onRegenerate: () => {},
    onNewConversation,
    announce,
    versions: { number: 1, count: 1 },
    showVersion: () => {},
  });
}
