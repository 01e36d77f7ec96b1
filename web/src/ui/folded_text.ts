// A long question (a pasted article, a log) shows its first lines only, with a button
// that unfolds it, so that a 60 KB paste does not push the conversation around it out of
// reach. How far a folded text shows is the style sheet's (.message-text.is-folded).
import { element } from "../dom";

// Text past either of these is taller than the folded height at any width the bubble has.
const FOLD_CHARACTERS = 600;
const FOLD_LINES = 8;

export function isLongText(text: string): boolean {
  return text.length > FOLD_CHARACTERS || text.split("\n").length > FOLD_LINES;
}

let count = 0;

export class FoldedText {
  readonly text = element("div", "message-text");
  readonly toggle = element("button", "text-toggle");

  /** `onUnfold`: the text grows in place, for the person to read on. */
  constructor(value: string, onUnfold: () => void) {
    this.text.id = `question-text-${++count}`;
    this.toggle.type = "button";
    this.toggle.setAttribute("aria-controls", this.text.id);
    this.toggle.addEventListener("click", () => {
      const unfold = this.text.classList.contains("is-folded");
      if (unfold) onUnfold();
      this.fold(!unfold);
      // Folding a long text moves its button far up: bring it back into view.
      if (!unfold) this.toggle.scrollIntoView({ block: "nearest" });
    });
    this.set(value);
  }

  set(value: string): void {
    this.text.textContent = value;
    this.text.hidden = !value;
    const long = isLongText(value);
    this.toggle.hidden = !long;
    this.fold(long);
  }

  private fold(folded: boolean): void {
    this.text.classList.toggle("is-folded", folded);
    this.toggle.setAttribute("aria-expanded", String(!folded));
    this.toggle.textContent = folded ? "Show more" : "Show less";
  }
}
