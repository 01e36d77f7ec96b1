import { describe, expect, it } from "vitest";
import { hiddenEdges } from "./scroll_hint";

describe("hiddenEdges", () => {
  it("marks the ends that hide content", () => {
    expect(hiddenEdges(0, 900, 360)).toEqual({ start: false, end: true });
    expect(hiddenEdges(200, 900, 360)).toEqual({ start: true, end: true });
    expect(hiddenEdges(540, 900, 360)).toEqual({ start: true, end: false });
    expect(hiddenEdges(539.6, 900, 360)).toEqual({ start: true, end: false });
  });

  it("marks nothing when everything fits", () => {
    expect(hiddenEdges(0, 360, 360)).toEqual({ start: false, end: false });
    expect(hiddenEdges(0, 360.5, 360)).toEqual({ start: false, end: false });
  });
});
