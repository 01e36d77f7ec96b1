// What each streamed piece adds to the answer being written: its text, the reasoning a
// thinking model writes before it, the end, and what the page measures of them itself.
import type { StreamPiece } from "./api/chat_stream";
import type { AssistantMessage } from "./conversation";
import { countChunk } from "./timings";

/** Adds `piece`, which arrived `elapsedMs` after the request was sent, to `answer`. */
export function addPiece(answer: AssistantMessage, piece: StreamPiece, elapsedMs: number): void {
  const written = piece.reasoning + piece.text;
  if (written) {
    // Reasoning tokens are tokens: the first one ends the wait, and each counts for speed.
    answer.clientTtftMs ??= elapsedMs;
    answer.streamed = countChunk(answer.streamed, written, elapsedMs - answer.clientTtftMs);
  }
  if (piece.reasoning) {
    answer.reasoning = (answer.reasoning ?? "") + piece.reasoning;
    if (!answer.text) answer.reasoningMs = elapsedMs - answer.clientTtftMs!;
  }
  if (piece.text) {
    if (answer.reasoning && !answer.text) answer.reasoningMs = elapsedMs - answer.clientTtftMs!;
    answer.text += piece.text;
  }
  if (piece.finishReason) answer.finishReason = piece.finishReason;
  if (piece.usage) answer.usage = piece.usage;
  if (piece.timings) answer.timings = piece.timings;
}
