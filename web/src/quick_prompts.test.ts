import { describe, expect, it } from "vitest";
import { BLANK, hasBlank, QUICK_PROMPTS, quickPromptsFor, VIDEO_QUICK_PROMPTS } from "./quick_prompts";

describe("quick prompts", () => {
  it("offers the video set when the newest attachment is a video, else the image set", () => {
    expect(quickPromptsFor("video")).toBe(VIDEO_QUICK_PROMPTS);
    expect(quickPromptsFor("image")).toBe(QUICK_PROMPTS);
    expect(quickPromptsFor(undefined)).toBe(QUICK_PROMPTS);
    expect(VIDEO_QUICK_PROMPTS.map((p) => p.label).slice(0, 2)).toEqual([
      "Describe what happens",
      "When does … happen?",
    ]);
  });

  it("marks the prompt that needs the person's words with one blank", () => {
    const when = VIDEO_QUICK_PROMPTS[1];
    expect(hasBlank(when)).toBe(true);
    expect(when.text.split(BLANK)).toHaveLength(2);
    expect([...QUICK_PROMPTS, VIDEO_QUICK_PROMPTS[0]].some(hasBlank)).toBe(false);
  });
});
