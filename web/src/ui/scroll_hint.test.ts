import { describe, expect, it, vi } from "vitest";
import { hiddenEdges, ScrollHint } from "./scroll_hint";

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

describe("the more button", () => {
  for (const [reduced, behavior] of [
    [false, "smooth"],
    [true, "instant"],
  ] as const) {
    it(`scrolls the row ${behavior === "smooth" ? "smoothly" : "at once when motion is reduced"}`, () => {
      vi.stubGlobal("matchMedia", (query: string) => ({ matches: reduced && query.includes("reduced-motion") }));
      vi.stubGlobal(
        "ResizeObserver",
        class {
          observe() {}
        },
      );
      const row = { addEventListener: () => {}, classList: { toggle: () => {} }, scrollBy: vi.fn(), clientWidth: 300 };
      const more = { addEventListener: (_: string, click: () => void) => click(), hidden: false };
      new ScrollHint(row as unknown as HTMLElement, more as unknown as HTMLButtonElement);
      expect(row.scrollBy).toHaveBeenCalledWith({ left: 210, behavior });
      vi.unstubAllGlobals();
    });
  }
});
