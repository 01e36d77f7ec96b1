import { describe, expect, it } from "vitest";
import { fitWithin, MAX_BYTES, MAX_PIXELS, needsReencode } from "./prepare";

describe("needsReencode", () => {
  it("sends server formats of reasonable size unchanged", () => {
    expect(needsReencode("image/jpeg", 3_000_000, 4000, 3000)).toBe(false);
    expect(needsReencode("image/png", 10, 1, 1)).toBe(false);
    expect(needsReencode("image/webp", MAX_BYTES, 4096, 4096)).toBe(false);
  });

  it("converts other formats, oversized files and oversized pictures", () => {
    expect(needsReencode("image/avif", 1000, 10, 10)).toBe(true);
    expect(needsReencode("image/heic", 1000, 10, 10)).toBe(true);
    expect(needsReencode("", 1000, 10, 10)).toBe(true);
    expect(needsReencode("image/png", MAX_BYTES + 1, 10, 10)).toBe(true);
    expect(needsReencode("image/jpeg", 1000, 4097, 4096)).toBe(true);
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
