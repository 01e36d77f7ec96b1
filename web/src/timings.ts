// Words and numbers for the small speed line under each answer. Every field may be
// missing (another server, an answer that was stopped); what is missing is left out.
import type { ImageTiming, Timings, Usage } from "./api/types";

/**
 * The page's own count of what streamed in. A chunk carries one token, or a few when
 * the server caught up after a pause, so the count is a close lower bound.
 */
export interface StreamedCount {
  chunks: number;
  characters: number;
  /** First text -> latest text. */
  decodeMs: number;
}

/** Adds a chunk of text that arrived `sinceFirstTextMs` after the first one. */
export function countChunk(count: StreamedCount | undefined, text: string, sinceFirstTextMs: number): StreamedCount {
  const next = count ?? { chunks: 0, characters: 0, decodeMs: 0 };
  next.chunks += 1;
  next.characters += text.length;
  next.decodeMs = Math.max(next.decodeMs, sinceFirstTextMs);
  return next;
}

/** Tokens per second between the first and the latest chunk; undefined before two. */
export function streamedRate(count: StreamedCount): number | undefined {
  return count.chunks >= 2 && count.decodeMs > 0 ? (count.chunks - 1) / (count.decodeMs / 1000) : undefined;
}

export interface AnswerStats {
  /** A few short items for the one-line summary. */
  summary: string[];
  /** Label/value rows for the expanded view. */
  details: [string, string][];
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/**
 * Accepts the spellings servers use for the same figures: `vision_encode_ms` for
 * `vision_ms`, and `grid_thw: [t, h, w]` for `grid_t`/`grid_h`/`grid_w`.
 */
export function normalizeTimings(raw: object): Timings {
  const value = raw as Timings & { vision_encode_ms?: unknown; images?: unknown };
  const timings: Timings = { ...value, images: undefined };
  if (!isNumber(timings.vision_ms) && isNumber(value.vision_encode_ms)) timings.vision_ms = value.vision_encode_ms;
  if (Array.isArray(value.images)) {
    timings.images = value.images
      .filter((image): image is object => typeof image === "object" && image !== null)
      .map((image) => {
        const entry = { ...image } as ImageTiming & { grid_thw?: unknown };
        const thw = entry.grid_thw;
        if (Array.isArray(thw) && thw.length === 3 && thw.every(isNumber) && !isNumber(entry.grid_h)) {
          [entry.grid_t, entry.grid_h, entry.grid_w] = thw;
        }
        delete entry.grid_thw;
        return entry;
      });
  } else {
    delete timings.images;
  }
  return timings;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

export function formatRate(tokensPerSecond: number): string {
  return `${tokensPerSecond.toFixed(tokensPerSecond < 100 ? 1 : 0)} tok/s`;
}

function size(width?: number, height?: number): string | null {
  return isNumber(width) && isNumber(height) ? `${width}×${height}` : null;
}

export function describeImage(image: ImageTiming): string {
  const parts: string[] = [];
  const original = size(image.width, image.height);
  const resized = size(image.resized_width, image.resized_height);
  if (original && resized && original !== resized) parts.push(`${original} → ${resized}`);
  else if (original ?? resized) parts.push(String(original ?? resized));
  if (isNumber(image.grid_h) && isNumber(image.grid_w)) {
    const t = isNumber(image.grid_t) && image.grid_t !== 1 ? `${image.grid_t}×` : "";
    parts.push(`grid ${t}${image.grid_h}×${image.grid_w}`);
  }
  if (isNumber(image.tokens)) parts.push(`${image.tokens} tokens`);
  if (image.cached) parts.push("cached");
  return parts.join(", ");
}

export function answerStats(
  timings?: Timings,
  usage?: Usage,
  clientTtftMs?: number,
  streamed?: StreamedCount,
): AnswerStats {
  const t = timings ?? {};
  // Without the server's figures (an answer stopped before its end, or another
  // server), the page's own count stands in for them.
  const counted = !isNumber(usage?.completion_tokens) && streamed && streamed.chunks > 0 ? streamed : undefined;
  const countedRate = counted && !isNumber(t.decode_ms) ? streamedRate(counted) : undefined;
  const images = Array.isArray(t.images) ? t.images : [];
  const summary: string[] = [];
  const details: [string, string][] = [];

  const allCached = images.length > 0 && images.every((image) => image.cached);
  if (isNumber(t.vision_ms) && images.length > 0) {
    summary.push(allCached ? "image cached" : `image ${formatDuration(t.vision_ms)}`);
  }
  const ttft = isNumber(t.ttft_ms) ? t.ttft_ms : clientTtftMs;
  if (isNumber(ttft)) summary.push(`first token ${formatDuration(ttft)}`);
  if (counted) summary.push(`about ${counted.chunks} tokens`);
  if (isNumber(t.decode_tokens_per_s) && t.decode_tokens_per_s > 0) summary.push(formatRate(t.decode_tokens_per_s));
  else if (countedRate !== undefined) summary.push(formatRate(countedRate));
  if (images.length === 1) {
    const image = images[0];
    if (isNumber(image.grid_h) && isNumber(image.grid_w)) {
      summary.push(`grid ${image.grid_h}×${image.grid_w}${isNumber(image.tokens) ? ` (${image.tokens} tokens)` : ""}`);
    }
  } else if (images.length > 1) {
    const tokens = images.reduce((sum, image) => sum + (isNumber(image.tokens) ? image.tokens : 0), 0);
    summary.push(`${images.length} images${tokens ? ` (${tokens} tokens)` : ""}`);
  }

  const rows: [string, number | undefined, number | undefined][] = [
    ["Waiting in queue", t.queue_ms, undefined],
    ["Reading images and text", t.preprocess_ms, undefined],
    ["Image encoding", t.vision_ms, undefined],
    ["Prompt processing", t.prefill_ms, t.prefill_tokens_per_s],
    [
      "Writing the answer",
      t.decode_ms ?? (countedRate !== undefined ? counted?.decodeMs : undefined),
      t.decode_tokens_per_s ?? countedRate,
    ],
    ["Time to first token", ttft, undefined],
    ["Total", t.total_ms, undefined],
  ];
  for (const [label, ms, rate] of rows) {
    if (!isNumber(ms)) continue;
    details.push([
      label,
      isNumber(rate) && rate > 0 ? `${formatDuration(ms)} (${formatRate(rate)})` : formatDuration(ms),
    ]);
  }
  if (isNumber(usage?.prompt_tokens)) {
    const cached = usage?.prompt_tokens_details?.cached_tokens;
    details.push([
      "Prompt tokens",
      isNumber(cached) && cached > 0 ? `${usage.prompt_tokens} (${cached} reused)` : String(usage.prompt_tokens),
    ]);
  }
  if (isNumber(usage?.completion_tokens)) details.push(["Answer tokens", String(usage.completion_tokens)]);
  else if (counted) {
    details.push(["Answer tokens", `about ${counted.chunks} (${counted.characters} characters, counted by the page)`]);
  }
  images.forEach((image, i) => details.push([`Image ${i + 1}`, describeImage(image)]));
  return { summary, details };
}
