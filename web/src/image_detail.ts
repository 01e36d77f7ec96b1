// The image detail choices of the settings: the token budget each one gets on this
// server, how a request asks for it, and the words that say so. The server owns the
// figures (GET /props); the page only adds Medium, which the server has no name for.
import type { ServerLimits } from "./api/server_limits";
import type { ImageDetail } from "./settings";

// Qwen's advice for OCR and grounding: at least 1024 image tokens.
const MEDIUM_DETAIL_TOKENS = 1024;

/** The most image tokens an image gets with `detail`, as the server applies it: a
 * request's own maximum is cut to the high-detail limit, so Medium never asks for more. */
export function detailTokens(detail: ImageDetail, limits: ServerLimits): number {
  switch (detail) {
    case "auto":
      return limits.imageDefaultTokens;
    case "low":
      return limits.imageLowDetailTokens;
    case "medium":
      return Math.min(MEDIUM_DETAIL_TOKENS, limits.imageHighDetailTokens);
    case "high":
      return limits.imageHighDetailTokens;
  }
}

/** The request's `max_pixels` for `detail`; none for the server default. Sent as a
 * request-wide budget rather than as each image's `detail`, so that Medium, which
 * OpenAI's `detail` lacks, goes the same way as the others. */
export function detailMaxPixels(detail: ImageDetail, limits: ServerLimits): number | undefined {
  return detail === "auto" ? undefined : detailTokens(detail, limits) * limits.imagePixelsPerToken;
}

/** What the choice says in the settings drawer. */
export function detailLabel(detail: ImageDetail, limits: ServerLimits): string {
  const tokens = detailTokens(detail, limits);
  switch (detail) {
    case "auto":
      return `Server default: up to ${tokens} image tokens`;
    case "low":
      return `Low: fastest, up to ${tokens} image tokens`;
    case "medium":
      return `Medium: text and charts, up to ${tokens} tokens`;
    case "high":
      // On a server whose limit is below Medium's, High is no slower than Medium.
      return tokens > detailTokens("medium", limits)
        ? `High: small print and precise boxes, up to ${tokens} tokens (slower)`
        : `High: small print and precise boxes, up to ${tokens} tokens`;
  }
}
