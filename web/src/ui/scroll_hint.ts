// Shows that a row scrolls sideways: its edges fade where more items hide (classes
// fade-start / fade-end) and a "more" button at the end scrolls it on. On a wide
// screen the row wraps instead, and neither shows.

// Below a pixel, rounding of fractional widths would leave a fade at the very end.
const EDGE_SLACK_PX = 1;

export type ScrollEdges = { start: boolean; end: boolean };

/** Which ends of a horizontally scrolling box have hidden content. */
export function hiddenEdges(scrollLeft: number, scrollWidth: number, clientWidth: number): ScrollEdges {
  const overflow = scrollWidth - clientWidth;
  if (overflow <= EDGE_SLACK_PX) return { start: false, end: false };
  return { start: scrollLeft > EDGE_SLACK_PX, end: scrollLeft < overflow - EDGE_SLACK_PX };
}

export class ScrollHint {
  constructor(
    private readonly row: HTMLElement,
    private readonly more: HTMLButtonElement,
  ) {
    row.addEventListener("scroll", () => this.update(), { passive: true });
    new ResizeObserver(() => this.update()).observe(row);
    more.addEventListener("click", () => {
      const still = matchMedia("(prefers-reduced-motion: reduce)").matches;
      row.scrollBy({ left: row.clientWidth * 0.7, behavior: still ? "instant" : "smooth" });
    });
    this.update();
  }

  /** Call after the row's items change (the row itself may keep its size). */
  update(): void {
    const edges = hiddenEdges(this.row.scrollLeft, this.row.scrollWidth, this.row.clientWidth);
    this.row.classList.toggle("fade-start", edges.start);
    this.row.classList.toggle("fade-end", edges.end);
    this.more.hidden = !edges.end;
  }
}
