import { describe, expect, it } from "vitest";
import { labelColors, textColorOn } from "./colors";

describe("labelColors", () => {
  it("gives each distinct label its own color in order of appearance", () => {
    const colors = labelColors(["cat", "dog", "cat", "", "bird"]);
    expect([...colors.keys()]).toEqual(["cat", "dog", "", "bird"]);
    expect(new Set([...colors.values()].map((c) => c.fill)).size).toBe(4);
    expect(colors.get("cat")?.fill).toBe("#e6194b");
  });

  it("picks the text color with more contrast", () => {
    expect(textColorOn("#ffffff")).toBe("#000000");
    expect(textColorOn("#000075")).toBe("#ffffff");
    expect(textColorOn("#3cb44b")).toBe("#000000");
  });
});
