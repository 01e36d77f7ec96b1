// An AnswerView on its own, as the page's tests build it: no images, one version, and
// the context's handlers doing nothing unless a test gives its own in `context`.
import type { AssistantMessage } from "../conversation";
import type { BlobCache } from "../storage/blob_cache";
import { AnswerView, type AnswerContext } from "./message_views";

export function answerViewFor(message: AssistantMessage, context: Partial<AnswerContext> = {}): AnswerView {
  return new AnswerView(message, {
    images: [],
    hasVideo: false,
    cache: {} as BlobCache,
    onRegenerate: () => {},
    onContinue: () => {},
    onNewConversation: () => {},
    announce: () => {},
    versions: { number: 1, count: 1 },
    showVersion: () => {},
    ...context,
  });
}
