// What the server accepts, from its GET /props (`limits`), so that the page refuses a
// file or a count the server would refuse before uploading anything, naming the
// server's own figure. A server that does not answer /props (an older qvl, a proxy that
// hides it) gets the limits `qvl serve` has by default. The same answer carries the
// sampling a request gets when it sets none (see sampling.ts).
import { parseSamplingDefaults, type SamplingDefaults } from "../sampling";
import { retryAfterMs } from "./errors";

export interface ServerLimits {
  /** A request's JSON body (`--max-body-mb`): the whole conversation, its images and
   * videos as base64. */
  bodyBytes: number;
  /** Encoded bytes per image (`--max-image-mb`). */
  imageBytes: number;
  /** Pixels per image before decoding. */
  imagePixels: number;
  /** Images per request (`--max-images`); a request carries the whole conversation. */
  imagesPerRequest: number;
  /** The shortest side an image may have, in pixels. */
  imageMinSide: number;
  /** The most an image's longer side may be, times its shorter side. */
  imageMaxAspectRatio: number;
  /** Pixels one image token covers (32 x 32). */
  imagePixelsPerToken: number;
  /** An image's budget when the request sets none (`--max-image-tokens`). */
  imageDefaultTokens: number;
  /** `detail: low` (never above the default). */
  imageLowDetailTokens: number;
  /** `detail: high`, and the most a request's own budget reaches
   * (`--high-detail-image-tokens`, never below the default). */
  imageHighDetailTokens: number;
  /** Encoded bytes per video file (`--max-video-mb`). */
  videoBytes: number;
  /** Length of a clip (`--max-video-seconds`). */
  videoSeconds: number;
  /** Videos per request (`--max-videos`). */
  videosPerRequest: number;
  /** Prompt and answer together (`--ctx-size`): the most an answer could be. */
  contextTokens: number;
  /** An answer's length when the request sets none (`--max-tokens`; less when the
   * context has less room left). */
  defaultAnswerTokens: number;
  /** A thinking model's reasoning when the request sets no budget
   * (`--thinking-budget`); null: none, it reasons until the answer's length runs out. */
  defaultThinkingTokens: number | null;
  /** Stop strings per request. */
  stopStrings: number;
}

/** `qvl serve`'s defaults. */
export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  // DefaultMaxBodyBytes (src/server/body_limit.cc) on the other defaults: 531 MiB.
  bodyBytes: 556_793_880,
  imageBytes: 16 * 1024 * 1024,
  imagePixels: 8192 * 8192,
  imagesPerRequest: 8,
  imageMinSide: 32,
  imageMaxAspectRatio: 200,
  imagePixelsPerToken: 32 * 32,
  imageDefaultTokens: 1280,
  imageLowDetailTokens: 256,
  imageHighDetailTokens: 4096,
  videoBytes: 256 * 1024 * 1024,
  videoSeconds: 600,
  videosPerRequest: 4,
  contextTokens: 16384,
  defaultAnswerTokens: 2048,
  defaultThinkingTokens: null,
  stopStrings: 4,
};

export const PROPS_PATH = "/props";

function objectAt(value: unknown, key: string): Record<string, unknown> {
  const inner = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>) : {};
}

function count(value: unknown, fallback: number, minimum: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= minimum ? value : fallback;
}

// Token counts and pixels per token go into max_pixels, which the server reads as an integer.
function whole(value: unknown, fallback: number): number {
  return Number.isInteger(value) && (value as number) >= 1 ? (value as number) : fallback;
}

/** The limits in a /props body; each one missing or malformed keeps its default. */
export function parseServerLimits(props: unknown): ServerLimits {
  const limits = objectAt(props, "limits");
  const image = objectAt(limits, "image");
  const video = objectAt(limits, "video");
  const d = DEFAULT_SERVER_LIMITS;
  // Held to the order the server keeps (low <= default <= high), so that a partial or
  // older answer cannot make low detail larger than the default or high smaller.
  const defaultTokens = whole(image.default_max_tokens, d.imageDefaultTokens);
  return {
    bodyBytes: count(limits.max_body_bytes, d.bodyBytes, 1),
    imageBytes: count(image.max_bytes, d.imageBytes, 1),
    imagePixels: count(image.max_decoded_pixels, d.imagePixels, 1),
    imagesPerRequest: count(image.max_per_request, d.imagesPerRequest, 0),
    imageMinSide: count(image.min_side, d.imageMinSide, 1),
    imageMaxAspectRatio: count(image.max_aspect_ratio, d.imageMaxAspectRatio, 1),
    imagePixelsPerToken: whole(image.pixels_per_token, d.imagePixelsPerToken),
    imageDefaultTokens: defaultTokens,
    imageLowDetailTokens: Math.min(whole(image.low_detail_tokens, d.imageLowDetailTokens), defaultTokens),
    imageHighDetailTokens: Math.max(whole(image.max_tokens, d.imageHighDetailTokens), defaultTokens),
    videoBytes: count(video.max_bytes, d.videoBytes, 1),
    videoSeconds: count(video.max_seconds, d.videoSeconds, 0),
    videosPerRequest: count(video.max_per_request, d.videosPerRequest, 0),
    contextTokens: count(limits.context_tokens, d.contextTokens, 1),
    defaultAnswerTokens: whole(limits.default_max_tokens, d.defaultAnswerTokens),
    // 0 is a budget (no reasoning); null and an older server's silence are none.
    defaultThinkingTokens:
      Number.isInteger(limits.default_thinking_token_budget) && (limits.default_thinking_token_budget as number) >= 0
        ? (limits.default_thinking_token_budget as number)
        : d.defaultThinkingTokens,
    stopStrings: Number.isInteger(limits.max_stop_strings)
      ? Math.max(0, limits.max_stop_strings as number)
      : d.stopStrings,
  };
}

export type LimitsAnswer =
  /** The server's limits, and its sampling defaults. */
  | { kind: "limits"; limits: ServerLimits; sampling: SamplingDefaults }
  /** The model is still loading: ask again after `retryMs`. */
  | { kind: "loading"; retryMs: number }
  /** No limits to be had now (no /props, a refused key, no network): keep what is in force. */
  | { kind: "none" };

const DEFAULT_RETRY_MS = 5000;

/** Asks the server for its limits; never throws. */
export async function fetchServerLimits(
  headers: Record<string, string>,
  fetcher: typeof fetch = fetch,
): Promise<LimitsAnswer> {
  try {
    const response = await fetcher(PROPS_PATH, { headers });
    if (response.status === 503) {
      return { kind: "loading", retryMs: retryAfterMs(response) || DEFAULT_RETRY_MS };
    }
    if (!response.ok) return { kind: "none" };
    const body: unknown = await response.json();
    if (typeof body !== "object" || body === null || !("limits" in body)) return { kind: "none" };
    return { kind: "limits", limits: parseServerLimits(body), sampling: parseSamplingDefaults(body) };
  } catch {
    return { kind: "none" };
  }
}
