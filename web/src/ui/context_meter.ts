// How much of the server's context the conversation fills: the prompt and answer tokens
// of its latest answer, which the next question adds to. Past WARN_SHARE the next answers
// are cut short and then questions refused (prompt and answer must fit the context), so
// the meter warns and offers a new conversation.
import type { Message } from "../conversation";
import { byId, element } from "../dom";

export const WARN_SHARE = 0.85;

const NUMBER = new Intl.NumberFormat("en");

/** Tokens the branch shown holds, from its latest answer the server counted (a stopped
 * or failed answer has no count); undefined before any. */
export function contextTokensUsed(branch: Message[]): number | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const message = branch[i];
    if (message.role !== "assistant") continue;
    const prompt = message.usage?.prompt_tokens;
    const answer = message.usage?.completion_tokens;
    if (typeof prompt === "number" && typeof answer === "number") return prompt + answer;
  }
  return undefined;
}

export class ContextMeter {
  private readonly meter = byId<HTMLElement>("context-meter");
  private readonly fill = byId<HTMLElement>("context-fill");
  private readonly figures = byId<HTMLElement>("context-figures");
  // Always in the page, empty unless warning, so that screen readers hear the warning come.
  private readonly warning = byId<HTMLElement>("context-warning");

  constructor(private readonly startNew: () => void) {}

  show(used: number | undefined, contextTokens: number): void {
    this.meter.hidden = used === undefined;
    if (used === undefined) {
      this.warning.replaceChildren();
      return;
    }
    const share = Math.min(1, used / contextTokens);
    const percent = Math.round(share * 100);
    this.fill.style.width = `${share * 100}%`;
    this.figures.textContent = `${NUMBER.format(used)} of ${NUMBER.format(contextTokens)} tokens`;
    this.meter.title = `The conversation so far uses ${percent}% of the server's context`;
    const warn = share > WARN_SHARE;
    this.meter.classList.toggle("is-warning", warn);
    if (!warn) {
      this.warning.replaceChildren();
      return;
    }
    const button = element("button", "text-button", "New conversation");
    button.type = "button";
    button.addEventListener("click", () => this.startNew());
    this.warning.replaceChildren(
      element(
        "span",
        "",
        share >= 1
          ? "The conversation fills the server's context: further questions will be refused."
          : `The conversation fills ${percent}% of the server's context: answers will soon be cut short.`,
      ),
      button,
    );
  }
}
