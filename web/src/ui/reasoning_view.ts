// The reasoning a thinking model writes before its answer, shown as Open WebUI and LM
// Studio show it: a folded block above the answer, open while the model thinks (its
// summary says so), folded once the answer begins ("Thought for 12 s"), a click away.
// It is drawn as Markdown like the answer, and only while open: a long reasoning in a
// stored conversation costs nothing until someone reads it.
import { element } from "../dom";
import { renderMarkdown } from "../markdown";
import { thoughtFor } from "../timings";
import { addCodeCopyButtons } from "./code_blocks";
import { BUSY_DOTS } from "./icons";

export const THINKING = "Thinking…";

export class ReasoningView {
  readonly element = element("details", "reasoning");
  private readonly summary = element("summary", "reasoning-summary");
  private readonly body = element("div", "markdown reasoning-text");
  private text = "";
  private drawnText: string | null = null;
  private label = "";
  private thinking: boolean | null = null;
  // Opened or folded by the person: left as they chose when the thinking ends.
  private chosen = false;

  constructor() {
    this.summary.addEventListener("click", () => {
      this.chosen = true;
    });
    this.element.addEventListener("toggle", () => this.draw());
    this.element.append(this.summary, this.body);
  }

  /** `thinking`: no answer yet, and more may come. Returns whether the text was drawn. */
  update(text: string, thinking: boolean, ms: number | undefined): boolean {
    this.text = text;
    if (thinking !== this.thinking) {
      this.thinking = thinking;
      if (!this.chosen) this.element.open = thinking;
      this.element.classList.toggle("is-thinking", thinking);
    }
    const label = thinking ? THINKING : thoughtFor(ms);
    if (label !== this.label) {
      this.label = label;
      this.summary.replaceChildren(label);
      if (thinking) this.summary.insertAdjacentHTML("afterbegin", BUSY_DOTS);
    }
    return this.draw();
  }

  private draw(): boolean {
    if (!this.element.open || this.text === this.drawnText) return false;
    const drawn = this.text;
    // Drawn again once code colours or maths have loaded, unless newer text was since.
    this.body.innerHTML = renderMarkdown(drawn, () => {
      if (this.drawnText !== drawn) return;
      this.drawnText = null;
      this.draw();
    });
    addCodeCopyButtons(this.body);
    this.drawnText = drawn;
    return true;
  }
}
