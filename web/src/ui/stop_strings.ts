// The stop strings of the settings: a box each, up to the server's count (/props
// `max_stop_strings`), added and removed with buttons. Typed as stopFromText reads them
// (\n for a line break); an empty box is no stop string.
import { byId, element } from "../dom";
import { MAX_STOP_BYTES, stopBytes, stopFromText, stopToText } from "../sampling";
import { iconSvg } from "./icons";

let rows = 0;

export class StopStrings {
  private readonly section = byId<HTMLFieldSetElement>("stop-strings");
  private readonly list = byId<HTMLUListElement>("stop-list");
  private readonly add = byId<HTMLButtonElement>("stop-add");
  private readonly hint = byId<HTMLParagraphElement>("stop-hint");
  private limit = 0;

  /** `onChange`: a box was added or removed (typing is the form's own input event). */
  constructor(private readonly onChange: () => void) {
    this.add.addEventListener("click", () => {
      this.list.append(this.row(""));
      this.renumber();
      this.list.querySelector<HTMLInputElement>("li:last-child input")?.focus();
    });
  }

  owns(target: EventTarget | null): boolean {
    return target instanceof Node && this.list.contains(target);
  }

  show(stops: string[], limit: number): void {
    this.limit = limit;
    this.section.hidden = limit === 0;
    this.hint.textContent =
      `The answer ends just before any of these; up to ${limit}. ` + "Type \\n for a line break and \\t for a tab.";
    this.list.replaceChildren(...stops.slice(0, limit).map((stop) => this.row(stopToText(stop))));
    this.renumber();
  }

  /** The stop strings typed, or undefined while one is too long for the server (which
   * its box then says). */
  read(): string[] | undefined {
    let usable = true;
    const stops: string[] = [];
    for (const item of this.list.children) {
      const input = item.querySelector("input")!;
      const error = item.querySelector<HTMLElement>(".field-error")!;
      const stop = stopFromText(input.value);
      const tooLong = stopBytes(stop) > MAX_STOP_BYTES;
      error.hidden = !tooLong;
      if (tooLong) {
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", error.id);
      } else {
        input.removeAttribute("aria-invalid");
        input.removeAttribute("aria-describedby");
      }
      if (tooLong) usable = false;
      else if (stop) stops.push(stop);
    }
    return usable ? stops : undefined;
  }

  private row(text: string): HTMLLIElement {
    const item = element("li", "stop-item");
    const input = element("input");
    input.type = "text";
    input.value = text;
    input.autocomplete = "off";
    input.spellcheck = false;
    const remove = element("button", "icon-button small");
    remove.type = "button";
    remove.innerHTML = iconSvg("close");
    remove.addEventListener("click", () => {
      const next = item.nextElementSibling ?? item.previousElementSibling;
      item.remove();
      this.renumber();
      (next?.querySelector("input") ?? this.add).focus();
      this.onChange();
    });
    const error = element("p", "field-error", `A stop string can be at most ${MAX_STOP_BYTES} bytes long.`);
    error.id = `stop-error-${++rows}`;
    error.hidden = true;
    item.append(input, remove, error);
    return item;
  }

  private renumber(): void {
    [...this.list.children].forEach((item, i) => {
      item.querySelector("input")!.setAttribute("aria-label", `Stop string ${i + 1}`);
      item.querySelector("button")!.setAttribute("aria-label", `Remove stop string ${i + 1}`);
    });
    this.add.hidden = this.list.children.length >= this.limit;
  }
}
