// The number boxes under "More sampling settings", one per field of sampling.ts. An empty
// box is the server's default, which its placeholder names; a value the server would
// refuse is named under its box and not used, and once left the box shows the value in
// force again.
import { element } from "../dom";
import {
  MORE_SAMPLING_FIELDS,
  parseSamplingText,
  rangeWords,
  type SamplingBox,
  type SamplingDefaults,
  type SamplingKey,
} from "../sampling";
import type { SamplingChoices } from "../settings";

interface Row {
  field: SamplingBox;
  input: HTMLInputElement;
  error: HTMLElement;
}

function sentence(words: string): string {
  return `${words[0].toUpperCase()}${words.slice(1)}.`;
}

function boxText(value: number | null): string {
  return value === null ? "" : String(value);
}

export class SamplingFields {
  private readonly rows: Row[];

  /** `inForce`: the value each field has now, shown again when its box is left. */
  constructor(container: HTMLElement, inForce: () => SamplingChoices) {
    this.rows = MORE_SAMPLING_FIELDS.map((field) => {
      const [row, box] = this.row(field);
      container.append(box);
      row.input.addEventListener("blur", () => {
        row.input.value = boxText(inForce()[field.key]);
        this.showError(row, false);
      });
      return row;
    });
  }

  /** The field whose box `target` is. */
  keyOf(target: EventTarget | null): SamplingKey | undefined {
    return this.rows.find((row) => row.input === target)?.field.key;
  }

  /** What `key`'s box holds: null when empty (the server's default), undefined when the
   * server would refuse it, which the box then says. */
  read(key: SamplingKey): number | null | undefined {
    const row = this.rows.find((candidate) => candidate.field.key === key)!;
    const value = row.input.validity.badInput ? undefined : parseSamplingText(row.field, row.input.value);
    this.showError(row, value === undefined);
    return value;
  }

  show(choices: SamplingChoices): void {
    for (const row of this.rows) {
      row.input.value = boxText(choices[row.field.key]);
      this.showError(row, false);
    }
  }

  /** The server's defaults, as each box's placeholder. */
  showDefaults(defaults: SamplingDefaults): void {
    for (const row of this.rows) {
      const value = defaults[row.field.key];
      row.input.placeholder =
        value !== undefined ? `Default ${value}` : row.field.key === "seed" ? "Random" : "Default";
    }
  }

  private row(field: SamplingBox): [Row, HTMLElement] {
    const id = `sampling-${field.key}`;
    const label = element("label", "", field.label);
    label.htmlFor = id;
    const input = element("input");
    input.type = "number";
    input.id = id;
    input.step = field.step;
    input.min = String(field.min);
    input.max = String(field.max);
    input.autocomplete = "off";
    // Phone keypads for "decimal" and "numeric" have no minus sign.
    if (field.min >= 0) input.inputMode = field.integer ? "numeric" : "decimal";
    const hint = element("p", "hint", `${field.hint} ${sentence(rangeWords(field))}`);
    hint.id = `${id}-hint`;
    const error = element("p", "field-error", `${field.label} must be ${rangeWords(field)}.`);
    error.id = `${id}-error`;
    error.hidden = true;
    input.setAttribute("aria-describedby", hint.id);
    const line = element("div", "sampling-line");
    line.append(label, input);
    const box = element("div", "sampling-field");
    box.append(line, error, hint);
    return [{ field, input, error }, box];
  }

  private showError(row: Row, shown: boolean): void {
    row.error.hidden = !shown;
    if (shown) {
      row.input.setAttribute("aria-invalid", "true");
      row.input.setAttribute("aria-describedby", `${row.error.id} ${row.input.id}-hint`);
    } else {
      row.input.removeAttribute("aria-invalid");
      row.input.setAttribute("aria-describedby", `${row.input.id}-hint`);
    }
  }
}
