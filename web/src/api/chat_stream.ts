// Sends a chat request and yields the answer as it streams in (OpenAI chunk format
// over server-sent events). Aborting the signal closes the connection, which is how
// the server learns to stop generating.
import { normalizeTimings } from "../timings";
import { ChatError, errorFromResponse, networkError, serverMessage } from "./errors";
import { SseParser } from "./sse";
import type { ChatRequestBody, PromptProgress, Timings, Usage } from "./types";

export interface StreamPiece {
  text: string;
  /** What a thinking model writes before its answer: delta.reasoning_content (vLLM,
   * llama-server), or delta.reasoning (later vLLM, OpenRouter); "" when none. */
  reasoning: string;
  finishReason?: string;
  usage?: Usage;
  timings?: Timings;
  /** How far the work before the first token has come, in a chunk with no choices. */
  progress?: PromptProgress;
}

export const CHAT_PATH = "/v1/chat/completions";

export async function* streamChat(
  body: ChatRequestBody,
  signal: AbortSignal,
  headers: Record<string, string> = {},
  fetchImpl: typeof fetch = fetch,
): AsyncGenerator<StreamPiece> {
  let response: Response;
  try {
    response = await fetchImpl(CHAT_PATH, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch {
    if (signal.aborted) return;
    throw networkError();
  }
  if (!response.ok) throw await errorFromResponse(response);
  if (!response.body) throw new ChatError("The server sent an empty answer.", "");

  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<string>;
      try {
        chunk = await reader.read();
      } catch (cause) {
        if (signal.aborted) return;
        throw new ChatError("The connection to the server was lost while answering.", errorText(cause));
      }
      const events = chunk.done ? parser.finish() : parser.push(chunk.value);
      for (const event of events) {
        if (event.data === "[DONE]") return;
        const piece = pieceFromEvent(event.data);
        if (piece.finishReason) finished = true;
        yield piece;
      }
      if (chunk.done) break;
    }
  } finally {
    reader.releaseLock();
  }
  if (!finished && !signal.aborted) {
    throw new ChatError("The answer stopped early: the connection to the server was lost.", "");
  }
}

export function pieceFromEvent(data: string): StreamPiece {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new ChatError("The server sent something the page cannot read.", data.slice(0, 200));
  }
  const message = serverMessage(chunk);
  if (message) throw new ChatError("The server stopped with an error.", message);
  const value = chunk as {
    choices?: {
      delta?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown };
      finish_reason?: unknown;
    }[];
    usage?: Usage | null;
    timings?: Timings | null;
    prompt_progress?: PromptProgress | null;
  };
  const choice = Array.isArray(value.choices) ? value.choices[0] : undefined;
  const delta = choice?.delta;
  const reasoning = typeof delta?.reasoning_content === "string" ? delta.reasoning_content : delta?.reasoning;
  const piece: StreamPiece = {
    text: typeof delta?.content === "string" ? delta.content : "",
    reasoning: typeof reasoning === "string" ? reasoning : "",
  };
  if (typeof choice?.finish_reason === "string") piece.finishReason = choice.finish_reason;
  if (value.usage && typeof value.usage === "object") piece.usage = value.usage;
  if (value.timings && typeof value.timings === "object") piece.timings = normalizeTimings(value.timings);
  if (value.prompt_progress && typeof value.prompt_progress === "object") piece.progress = value.prompt_progress;
  return piece;
}

function errorText(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
