// Words and numbers for the small speed line under each answer. Every field may be
// missing (another server, an answer that was stopped); what is missing is left out.
import type { ImageTiming, Timings, Usage, VideoTiming } from "./api/types";

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

/** One part of an answer written in several (the first answer, then each continuation):
 * its answer tokens, kept when the next part begins. */
export interface AnswerPart {
  /** As the server counted them, or else the page; absent when neither did. */
  tokens?: number;
  /** Of them, a thinking model's reasoning. */
  thinking?: number;
  /** Counted by the page, without the server's usage: a close lower bound. */
  counted?: boolean;
}

/** The page's count stands in for the server's only where the server sent none. */
function pageCount(usage?: Usage, streamed?: StreamedCount): StreamedCount | undefined {
  return !isNumber(usage?.completion_tokens) && streamed && streamed.chunks > 0 ? streamed : undefined;
}

/** The part of an answer that `usage`, or without it the page's `streamed` count, describes. */
export function answerPart(usage?: Usage, streamed?: StreamedCount): AnswerPart {
  if (isNumber(usage?.completion_tokens)) {
    const thinking = usage.completion_tokens_details?.reasoning_tokens;
    return isNumber(thinking) && thinking > 0
      ? { tokens: usage.completion_tokens, thinking }
      : { tokens: usage.completion_tokens };
  }
  const counted = pageCount(usage, streamed);
  return counted ? { tokens: counted.chunks, counted: true } : {};
}

/** Objects of a timings array, with `grid_thw: [t, h, w]` spelled as grid_t/grid_h/grid_w. */
function normalizeGrids<T extends { grid_t?: number; grid_h?: number; grid_w?: number }>(list: unknown): T[] {
  if (!Array.isArray(list)) return [];
  return list
    .filter((item): item is object => typeof item === "object" && item !== null)
    .map((item) => {
      const entry = { ...item } as T & { grid_thw?: unknown };
      const thw = entry.grid_thw;
      if (Array.isArray(thw) && thw.length === 3 && thw.every(isNumber) && !isNumber(entry.grid_h)) {
        [entry.grid_t, entry.grid_h, entry.grid_w] = thw;
      }
      delete entry.grid_thw;
      return entry;
    });
}

/**
 * Accepts the spellings servers use for the same figures: `vision_encode_ms` for
 * `vision_ms`, and `grid_thw: [t, h, w]` for `grid_t`/`grid_h`/`grid_w`.
 */
export function normalizeTimings(raw: object): Timings {
  const value = raw as Timings & { vision_encode_ms?: unknown; images?: unknown; videos?: unknown };
  const timings: Timings = { ...value };
  delete timings.images;
  delete timings.videos;
  if (!isNumber(timings.vision_ms) && isNumber(value.vision_encode_ms)) timings.vision_ms = value.vision_encode_ms;
  if (Array.isArray(value.images)) timings.images = normalizeGrids<ImageTiming>(value.images);
  if (Array.isArray(value.videos)) timings.videos = normalizeGrids<VideoTiming>(value.videos);
  return timings;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

/** What a thinking model's reasoning is called once written: "Thought for 12 s". */
export function thoughtFor(ms: number | undefined): string {
  if (!isNumber(ms)) return "Thoughts";
  if (ms < 1000) return "Thought for less than a second";
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `Thought for ${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return `Thought for ${minutes} min ${seconds - minutes * 60} s`;
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

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** "4 frames sampled, 160 tokens": what a video's chip shows once answered. */
export function videoFacts(video: VideoTiming): string {
  const parts: string[] = [];
  if (isNumber(video.sampled_frames)) parts.push(`${plural(video.sampled_frames, "frame")} sampled`);
  if (isNumber(video.tokens)) parts.push(`${video.tokens} tokens`);
  return parts.join(", ");
}

function formatFps(fps: number): string {
  return String(Number(fps.toFixed(2)));
}

export function describeVideo(video: VideoTiming): string {
  const parts: string[] = [];
  if (isNumber(video.sampled_frames)) {
    const of = isNumber(video.frames) ? ` of ${video.frames}` : "";
    const fps = isNumber(video.fps) && video.fps > 0 ? ` at ${formatFps(video.fps)} fps` : "";
    parts.push(`${video.sampled_frames}${of} frames${fps} sampled`);
  } else if (isNumber(video.frames)) {
    parts.push(plural(video.frames, "frame"));
  }
  parts.push(describeImage(video));
  if (isNumber(video.decode_ms)) parts.push(`decoded in ${formatDuration(video.decode_ms)}`);
  if (isNumber(video.encode_ms)) parts.push(`encoded in ${formatDuration(video.encode_ms)}`);
  return parts.filter(Boolean).join(", ");
}

/** "image", "video" or "images and video": what the vision time was spent on. */
function visionNoun(images: number, videos: number): string {
  if (videos === 0) return "image";
  if (images === 0) return "video";
  return "images and video";
}

/** The whole answer's tokens, `earlier` parts and then `latest`; undefined when a part
 * was not counted. */
function wholeAnswer(earlier: AnswerPart[], latest: AnswerPart): Required<AnswerPart> | undefined {
  const parts = [...earlier, latest];
  if (!parts.every((part) => isNumber(part.tokens))) return undefined;
  return {
    tokens: parts.reduce((sum, part) => sum + part.tokens!, 0),
    thinking: parts.reduce((sum, part) => sum + (part.thinking ?? 0), 0),
    counted: parts.some((part) => part.counted),
  };
}

/** "104 (64 + 40 continued)": a continued answer's tokens, the sum of its parts. */
function continuedTokens(earlier: AnswerPart[], latest: AnswerPart, whole: Required<AnswerPart>): string {
  const notes = [`${[...earlier, latest].map((part) => part.tokens).join(" + ")} continued`];
  if (whole.thinking > 0) notes.push(`${whole.thinking} thinking`);
  if (whole.counted) {
    const all = [...earlier, latest].every((part) => part.counted);
    notes.push(`${all ? "" : "partly "}counted by the page`);
  }
  return `${whole.counted ? "about " : ""}${whole.tokens} (${notes.join(", ")})`;
}

/** Which request the timings of an answer continued `continuations` times are from. */
function continuedTimes(continuations: number): string {
  const times = continuations === 1 ? "once" : continuations === 2 ? "twice" : `${continuations} times`;
  return `${times}; the timings below are the ${continuations === 1 ? "" : "latest "}continuation's`;
}

/**
 * The speed line and details of an answer from its latest request's figures. An answer
 * continued (`earlier` holds the parts before its latest continuation) shows its tokens
 * summed over every part, and the latest continuation's timings, said so.
 */
export function answerStats(
  timings?: Timings,
  usage?: Usage,
  clientTtftMs?: number,
  streamed?: StreamedCount,
  earlier: AnswerPart[] = [],
): AnswerStats {
  const t = timings ?? {};
  // Without the server's figures (an answer stopped before its end, or another
  // server), the page's own count stands in for them.
  const counted = pageCount(usage, streamed);
  const latest = answerPart(usage, streamed);
  const whole = earlier.length > 0 ? wholeAnswer(earlier, latest) : undefined;
  const tokensLabel = earlier.length > 0 ? "Answer tokens (latest continuation)" : "Answer tokens";
  const countedRate = counted && !isNumber(t.decode_ms) ? streamedRate(counted) : undefined;
  const images = Array.isArray(t.images) ? t.images : [];
  const videos = Array.isArray(t.videos) ? t.videos : [];
  const media = [...images, ...videos];
  const noun = visionNoun(images.length, videos.length);
  const summary: string[] = [];
  const details: [string, string][] = [];

  const allCached = media.length > 0 && media.every((item) => item.cached);
  if (isNumber(t.vision_ms) && media.length > 0) {
    summary.push(allCached ? `${noun} cached` : `${noun} ${formatDuration(t.vision_ms)}`);
  }
  const ttft = isNumber(t.ttft_ms) ? t.ttft_ms : clientTtftMs;
  if (isNumber(ttft)) summary.push(`first token ${formatDuration(ttft)}`);
  if (counted) {
    const tokens = whole?.tokens ?? counted.chunks;
    summary.push(`about ${tokens} token${tokens === 1 ? "" : "s"}`);
  }
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
  // The sampled frames are what a video costs and what the model saw of it.
  const sampled = videos.reduce((sum, video) => sum + (isNumber(video.sampled_frames) ? video.sampled_frames : 0), 0);
  if (sampled > 0) {
    const tokens = videos.reduce((sum, video) => sum + (isNumber(video.tokens) ? video.tokens : 0), 0);
    const what = videos.length === 1 ? plural(sampled, "video frame") : `${videos.length} videos, ${sampled} frames`;
    summary.push(`${what}${tokens ? ` (${tokens} tokens)` : ""}`);
  }

  // qvl reports a vision time (0) for text-only answers too: no stage to show for it.
  const sawMedia = media.length > 0 || (isNumber(t.vision_ms) && t.vision_ms > 0);
  const reading =
    videos.length > 0 ? "Reading media and text" : sawMedia ? "Reading images and text" : "Reading the text";
  const rows: [string, number | undefined, number | undefined][] = [
    ["Waiting in queue", t.queue_ms, undefined],
    [reading, t.preprocess_ms, undefined],
    [`${noun[0].toUpperCase()}${noun.slice(1)} encoding`, sawMedia ? t.vision_ms : undefined, undefined],
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
  if (earlier.length > 0 && details.length > 0) details.unshift(["Continued", continuedTimes(earlier.length)]);
  if (isNumber(usage?.prompt_tokens)) {
    const cached = usage?.prompt_tokens_details?.cached_tokens;
    details.push([
      "Prompt tokens",
      isNumber(cached) && cached > 0 ? `${usage.prompt_tokens} (${cached} reused)` : String(usage.prompt_tokens),
    ]);
  }
  if (whole) {
    details.push(["Answer tokens", continuedTokens(earlier, latest, whole)]);
  } else if (counted) {
    details.push([tokensLabel, `about ${counted.chunks} (${counted.characters} characters, counted by the page)`]);
  } else if (isNumber(latest.tokens)) {
    details.push([
      tokensLabel,
      latest.thinking ? `${latest.tokens} (${latest.thinking} thinking)` : String(latest.tokens),
    ]);
  }
  if (isNumber(t.draft_n) && t.draft_n > 0 && isNumber(t.draft_n_accepted)) {
    details.push(["Guessed ahead", `${t.draft_n_accepted} of ${plural(t.draft_n, "drafted token")} kept`]);
  }
  images.forEach((image, i) => details.push([`Image ${i + 1}`, describeImage(image)]));
  videos.forEach((video, i) => details.push([`Video ${i + 1}`, describeVideo(video)]));
  return { summary, details };
}
