// A modal <dialog> keeps the page behind it from taking focus, but Tab past its last
// control leaves the page for the browser's own toolbar, and the next Tab starts over
// at the top of the page, still behind the dialog. Tab and Shift+Tab wrap around inside
// the dialog instead.

const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

/** The controls Tab stops at in `root`, in order. */
export function tabStops(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
    (node) =>
      !node.matches(":disabled, [tabindex='-1']") &&
      // Tab reaches a group of radio buttons at its checked one.
      !(node instanceof HTMLInputElement && node.type === "radio" && !node.checked) &&
      node.getClientRects().length > 0,
  );
}

export function keepFocusInside(dialog: HTMLDialogElement): void {
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const stops = tabStops(dialog);
    const first = stops[0];
    const last = stops.at(-1);
    if (!first || !last) return;
    const leaving = event.shiftKey ? document.activeElement === first : document.activeElement === last;
    if (!leaving) return;
    event.preventDefault();
    (event.shiftKey ? last : first).focus();
  });
}
