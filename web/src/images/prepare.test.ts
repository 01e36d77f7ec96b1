import { describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { fitWithin, imageShapeProblem, imageSizeProblem, MAX_BYTES, MAX_PIXELS, needsReencode } from "./prepare";

const LIMITS = DEFAULT_SERVER_LIMITS;

describe("needsReencode", () => {
  it("sends server formats of reasonable size unchanged", () => {
    expect(needsReencode("image/jpeg", 3_000_000, 4000, 3000, LIMITS)).toBe(false);
    expect(needsReencode("image/png", 10, 1, 1, LIMITS)).toBe(false);
    expect(needsReencode("image/webp", MAX_BYTES, 4096, 4096, LIMITS)).toBe(false);
  });

  it("converts other formats, oversized files and oversized pictures", () => {
    expect(needsReencode("image/avif", 1000, 10, 10, LIMITS)).toBe(true);
    expect(needsReencode("image/heic", 1000, 10, 10, LIMITS)).toBe(true);
    expect(needsReencode("", 1000, 10, 10, LIMITS)).toBe(true);
    expect(needsReencode("image/png", MAX_BYTES + 1, 10, 10, LIMITS)).toBe(true);
    expect(needsReencode("image/jpeg", 1000, 4097, 4096, LIMITS)).toBe(true);
  });
});

describe("a server with lower limits", () => {
  const small = { ...DEFAULT_SERVER_LIMITS, imageBytes: 1024 * 1024, imagePixels: 1000 * 1000 };

  it("gets files over its byte or pixel limit converted", () => {
    expect(needsReencode("image/jpeg", 1024 * 1024, 1000, 1000, small)).toBe(false);
    expect(needsReencode("image/jpeg", 1024 * 1024 + 1, 10, 10, small)).toBe(true);
    expect(needsReencode("image/jpeg", 1000, 1001, 1000, small)).toBe(true);
  });

  it("refuses a converted file still over its byte limit, naming the limit", () => {
    expect(imageSizeProblem("scan.png", 1024 * 1024, small.imageBytes)).toBeUndefined();
    expect(imageSizeProblem("scan.png", 3 * 1024 * 1024, small.imageBytes)).toBe(
      '"scan.png" is 3.0 MB even as JPEG, over the server\'s limit of 1.0 MB per image. Use a smaller picture.',
    );
  });
});

describe("fitWithin", () => {
  it("keeps small sizes and scales large ones down keeping the aspect ratio", () => {
    expect(fitWithin(640, 480)).toEqual({ width: 640, height: 480 });
    const { width, height } = fitWithin(8000, 6000);
    expect(width * height).toBeLessThanOrEqual(MAX_PIXELS);
    expect(Math.abs(width / height - 4 / 3)).toBeLessThan(0.001);
    expect(fitWithin(100000, 1, 1000)).toEqual({ width: 1000, height: 1 });
    expect(fitWithin(1, 100000, 1000)).toEqual({ width: 1, height: 1000 });
  });
});

describe("imageShapeProblem", () => {
  it("refuses what the model's preprocessor refuses, naming the server's figures", () => {
    expect(imageShapeProblem("a.png", 32, 6400, LIMITS)).toBeUndefined();
    expect(imageShapeProblem("a.png", 1, 10000, LIMITS)).toBe(
      '"a.png" is 1 x 10000 pixels: the model needs at least 32 pixels on each side. Use a larger picture.',
    );
    expect(imageShapeProblem("a.png", 31, 31, LIMITS)).toMatch(/at least 32 pixels/);
    expect(imageShapeProblem("b.png", 6401, 32, LIMITS)).toBe(
      '"b.png" is 6401 x 32 pixels: for the model, the longer side may be at most 200 times the shorter one. Crop it.',
    );
    const other = { ...LIMITS, imageMinSide: 28, imageMaxAspectRatio: 100 };
    expect(imageShapeProblem("c.png", 28, 2800, other)).toBeUndefined();
    expect(imageShapeProblem("c.png", 28, 2801, other)).toMatch(/at most 100 times the shorter/);
  });
});
