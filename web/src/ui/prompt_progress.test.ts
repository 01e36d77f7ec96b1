import { describe, expect, it } from "vitest";
import { percentOf, waitStatus } from "./prompt_progress";

describe("waitStatus", () => {
  it("names the work alone without a report, as before servers sent them", () => {
    expect(waitStatus("video")).toEqual({ label: "Watching the video…" });
    expect(waitStatus("image")).toEqual({ label: "Looking at the image…" });
    expect(waitStatus("none")).toEqual({ label: "Thinking…" });
  });

  it("gives the images' encoding while it runs, then the prompt read so far", () => {
    const vision = { total: 782, cache: 0, processed: 0, vision: 0.4 };
    expect(waitStatus("image", vision)).toEqual({ label: "Looking at the image…", percent: 40 });
    expect(waitStatus("video", vision)).toEqual({ label: "Watching the video…", percent: 40 });
    const prompt = { total: 782, cache: 0, processed: 352, vision: 1 };
    expect(waitStatus("image", prompt)).toEqual({ label: "Reading the prompt…", percent: 45 });
    expect(waitStatus("video", prompt)).toEqual({ label: "Reading the prompt…", percent: 45 });
    expect(waitStatus("none", prompt)).toEqual({ label: "Reading the prompt…", percent: 45 });
  });

  it("counts the cached part of the prompt as read", () => {
    expect(waitStatus("none", { total: 1000, cache: 500, processed: 500, vision: 1 })).toEqual({
      label: "Reading the prompt…",
      percent: 50,
    });
  });

  it("reads the prompt when there is no picture to look at, whatever vision says", () => {
    expect(waitStatus("none", { total: 100, processed: 10, vision: 0 })).toEqual({
      label: "Reading the prompt…",
      percent: 10,
    });
  });

  it("names the work alone when the report says nothing it can use", () => {
    expect(waitStatus("image", {})).toEqual({ label: "Looking at the image…" });
    expect(waitStatus("image", { total: 0, processed: 0, vision: 1 })).toEqual({ label: "Looking at the image…" });
    expect(waitStatus("none", { total: 100, vision: 1 })).toEqual({ label: "Thinking…" });
    const odd = { total: "100", processed: Number.NaN } as unknown as { total: number; processed: number };
    expect(waitStatus("none", odd)).toEqual({ label: "Thinking…" });
  });
});

describe("percentOf", () => {
  it("rounds down, so that 100% means done", () => {
    expect(percentOf(0)).toBe(0);
    expect(percentOf(0.004)).toBe(0);
    expect(percentOf(0.456)).toBe(45);
    expect(percentOf(0.999)).toBe(99);
    expect(percentOf(1)).toBe(100);
  });

  it("keeps to 0 to 100", () => {
    expect(percentOf(-0.2)).toBe(0);
    expect(percentOf(1.7)).toBe(100);
    expect(waitStatus("none", { total: 100, processed: 130, vision: 1 }).percent).toBe(100);
  });
});
