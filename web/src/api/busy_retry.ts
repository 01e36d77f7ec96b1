// A busy server (its queue full, or its model still loading: 503 or 429 with a
// Retry-After) is asked again after the time it names, a few times, before the answer
// fails, as OpenAI's own clients do; until then the person sees that the page waits.
import { streamChat, type StreamPiece } from "./chat_stream";
import { ChatError } from "./errors";
import type { ChatRequestBody } from "./types";

const BUSY_RETRIES = 3;
const LONGEST_BUSY_WAIT_MS = 30_000;

/** How long to wait before asking again after `error`, when `retries` tries were made
 * again already; undefined when the page should not: only a busy server that named a
 * time is asked again. */
export function busyRetryDelayMs(error: unknown, retries: number): number | undefined {
  if (!(error instanceof ChatError) || (error.status !== 503 && error.status !== 429)) return undefined;
  if (error.retryAfterMs <= 0 || retries >= BUSY_RETRIES) return undefined;
  return Math.min(error.retryAfterMs, LONGEST_BUSY_WAIT_MS);
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * streamChat, asked again while the server is busy. `waiting` hears how long the page
 * waits before each new try, and 0 when it tries. A busy server answers with a status
 * before any piece, so no piece is ever sent twice. Stopping ends a wait: the next try
 * then ends at once, as stopped.
 */
export async function* streamChatWhenFree(
  body: ChatRequestBody,
  signal: AbortSignal,
  headers: Record<string, string>,
  waiting: (ms: number) => void,
  fetchImpl: typeof fetch = fetch,
): AsyncGenerator<StreamPiece> {
  for (let retries = 0; ; retries++) {
    try {
      yield* streamChat(body, signal, headers, fetchImpl);
      return;
    } catch (error) {
      const wait = busyRetryDelayMs(error, retries);
      if (wait === undefined) throw error;
      waiting(wait);
      await delay(wait, signal);
      waiting(0);
    }
  }
}
