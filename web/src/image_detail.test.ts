import { describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS, parseServerLimits, type ServerLimits } from "./api/server_limits";
import { detailLabel, detailMaxPixels, detailTokens } from "./image_detail";
import type { ImageDetail } from "./settings";

const CHOICES: ImageDetail[] = ["auto", "low", "medium", "high"];

function labels(limits: ServerLimits): string[] {
  return CHOICES.map((detail) => detailLabel(detail, limits));
}

/** The /props image limits of `qvl serve` started with the given figures. */
function served(image: Record<string, number>): ServerLimits {
  return parseServerLimits({ limits: { image: { pixels_per_token: 1024, min_tokens: 64, ...image } } });
}

describe("image detail on qvl serve's defaults", () => {
  it("names the server's budget for each choice", () => {
    expect(labels(DEFAULT_SERVER_LIMITS)).toEqual([
      "Server default: up to 1280 image tokens",
      "Low: fastest, up to 256 image tokens",
      "Medium: text and charts, up to 1024 tokens",
      "High: small print and precise boxes, up to 4096 tokens (slower)",
    ]);
  });

  it("asks for those budgets as max_pixels, and for nothing on the server default", () => {
    expect(CHOICES.map((detail) => detailMaxPixels(detail, DEFAULT_SERVER_LIMITS))).toEqual([
      undefined,
      256 * 1024,
      1024 * 1024,
      4096 * 1024,
    ]);
  });
});

describe("image detail on a server with other limits", () => {
  it("follows --max-image-tokens and --high-detail-image-tokens", () => {
    const limits = served({ default_max_tokens: 2048, low_detail_tokens: 256, max_tokens: 8192 });
    expect(labels(limits)).toEqual([
      "Server default: up to 2048 image tokens",
      "Low: fastest, up to 256 image tokens",
      "Medium: text and charts, up to 1024 tokens",
      "High: small print and precise boxes, up to 8192 tokens (slower)",
    ]);
    expect(detailMaxPixels("high", limits)).toBe(8192 * 1024);
  });

  it("cuts Medium to a high-detail limit below 1024, as the server would, and asks for no more", () => {
    const limits = served({ default_max_tokens: 512, low_detail_tokens: 256, max_tokens: 768 });
    expect(detailTokens("medium", limits)).toBe(768);
    expect(detailMaxPixels("medium", limits)).toBe(768 * 1024);
    expect(labels(limits)).toEqual([
      "Server default: up to 512 image tokens",
      "Low: fastest, up to 256 image tokens",
      "Medium: text and charts, up to 768 tokens",
      // No slower than Medium here, so it does not say so.
      "High: small print and precise boxes, up to 768 tokens",
    ]);
  });

  it("keeps Low at a default below 256, as the server does", () => {
    const limits = served({ default_max_tokens: 128, low_detail_tokens: 128, max_tokens: 4096 });
    expect(labels(limits).slice(0, 2)).toEqual([
      "Server default: up to 128 image tokens",
      "Low: fastest, up to 128 image tokens",
    ]);
    expect(detailMaxPixels("low", limits)).toBe(128 * 1024);
  });

  it("uses the server's pixels per token", () => {
    const limits = served({ pixels_per_token: 784, default_max_tokens: 1280, max_tokens: 4096 });
    expect(detailMaxPixels("low", limits)).toBe(256 * 784);
  });
});
