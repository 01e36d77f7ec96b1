// The settings drawer. Every change is applied and saved at once; there is no
// separate save button to forget. Each control changes its own setting only, so that a
// sampling setting nobody touched stays the server's default, whatever else is typed.
import { checkJsonSchema, type AnswerFormat } from "../answer_format";
import { byId } from "../dom";
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "../api/server_limits";
import { detailLabel } from "../image_detail";
import { MORE_SAMPLING_FIELDS, QWEN3_VL_SAMPLING, type SamplingDefaults } from "../sampling";
import { DEFAULT_SETTINGS, normalizeSettings, type ImageDetail, type Settings } from "../settings";
import { SamplingFields } from "./sampling_fields";
import { StopStrings } from "./stop_strings";
import { keepFocusInside } from "./focus_trap";

// Enough of a conversation's instructions to recognise them.
const QUOTED_PROMPT_CHARACTERS = 120;

export class SettingsDialog {
  private readonly dialog = byId<HTMLDialogElement>("settings-dialog");
  private readonly form = byId<HTMLFormElement>("settings-form");
  private readonly temperature = byId<HTMLInputElement>("temperature");
  private readonly temperatureValue = byId<HTMLOutputElement>("temperature-value");
  private readonly temperatureDefault = byId<HTMLButtonElement>("temperature-default");
  private readonly maxTokens = byId<HTMLInputElement>("max-tokens");
  private readonly maxTokensHint = byId<HTMLParagraphElement>("max-tokens-hint");
  private readonly thinkingBudget = byId<HTMLInputElement>("thinking-budget");
  private readonly thinkingBudgetHint = byId<HTMLParagraphElement>("thinking-budget-hint");
  private readonly moreSampling = byId<HTMLDetailsElement>("more-sampling");
  private readonly samplingChanged = byId<HTMLElement>("sampling-changed");
  private readonly systemPrompt = byId<HTMLTextAreaElement>("system-prompt");
  private readonly conversationPromptNote = byId<HTMLParagraphElement>("system-prompt-conversation");
  private readonly jsonSchemaField = byId<HTMLElement>("json-schema-field");
  private readonly jsonSchema = byId<HTMLTextAreaElement>("json-schema");
  private readonly jsonSchemaError = byId<HTMLParagraphElement>("json-schema-error");
  private readonly apiKey = byId<HTMLInputElement>("api-key");
  private readonly apiKeyStatus = byId<HTMLParagraphElement>("api-key-status");
  private readonly sampling: SamplingFields;
  private readonly stops: StopStrings;
  private askingForKey = false;
  private limits: ServerLimits = DEFAULT_SERVER_LIMITS;
  private defaults: SamplingDefaults = QWEN3_VL_SAMPLING;

  /** `conversationPrompt`: the instructions of the conversation on screen, once it has
   * its own (see Conversation.systemPrompt). */
  constructor(
    private settings: Settings,
    private readonly onChange: (settings: Settings) => void,
    private readonly conversationPrompt: () => string | undefined,
  ) {
    this.sampling = new SamplingFields(byId("sampling-fields"), () => this.settings);
    this.stops = new StopStrings(() => this.read(null, true));
    this.show(settings);
    this.showDetailLabels();
    this.sampling.showDefaults(this.defaults);
    this.form.addEventListener("input", (event) => this.read(event.target));
    this.form.addEventListener("change", (event) => this.read(event.target));
    this.maxTokens.addEventListener("blur", () => (this.maxTokens.value = countText(this.settings.maxTokens)));
    this.thinkingBudget.addEventListener(
      "blur",
      () => (this.thinkingBudget.value = countText(this.settings.thinkingBudget)),
    );
    this.temperatureDefault.addEventListener("click", () => {
      this.change({ temperature: null });
      // The button hides once the default is back.
      this.temperature.focus();
    });
    byId<HTMLButtonElement>("settings-reset").addEventListener("click", () => {
      // The API key is no preference: resetting must not disconnect the page.
      const defaults = { ...DEFAULT_SETTINGS, apiKey: this.settings.apiKey };
      this.show(defaults);
      this.change(defaults);
    });
    closeOnBackdropClick(this.dialog);
    keepFocusInside(this.dialog);
  }

  /** The server's limits (from /props, which may answer after the drawer was built):
   * the longest answer it could give (its context), its thinking budget, each image
   * detail's budget, and how many stop strings it takes. */
  setServerLimits(limits: ServerLimits): void {
    this.limits = limits;
    this.showMaxTokensLimits();
    this.showThinkingBudgetLimits();
    this.showDetailLabels();
    this.stops.show(this.settings.stop, limits.stopStrings);
  }

  /** The sampling the server gives a request that sets none (/props). */
  setSamplingDefaults(defaults: SamplingDefaults): void {
    this.defaults = defaults;
    this.sampling.showDefaults(defaults);
    this.showTemperature();
  }

  open(): void {
    this.showConversationPrompt();
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** Opens the settings at the API key field and says why. */
  askForKey(message: string): void {
    this.apiKeyStatus.textContent = message;
    this.apiKeyStatus.hidden = false;
    this.askingForKey = true;
    if (this.dialog.open) return;
    this.showConversationPrompt();
    this.dialog.showModal();
    this.apiKey.focus({ preventScroll: true });
    this.apiKey.select();
    // The field is the last one: the drawer's end shows it with the message under it.
    // Scrolling the message's own edge into view could leave a fraction of a pixel of it
    // out, as scroll offsets are whole pixels.
    this.dialog.scrollTop = this.dialog.scrollHeight;
  }

  /** The server took the key: if the dialog was opened to ask for it, its job is done.
   * Returns whether it was asking. */
  keyAccepted(): boolean {
    this.apiKeyStatus.hidden = true;
    this.apiKeyStatus.textContent = "";
    const wasAsking = this.askingForKey;
    this.askingForKey = false;
    if (wasAsking && this.dialog.open) this.dialog.close();
    return wasAsking;
  }

  private show(settings: Settings): void {
    this.settings = settings;
    this.showTemperature();
    this.maxTokens.value = countText(settings.maxTokens);
    this.showMaxTokensLimits();
    this.thinkingBudget.value = countText(settings.thinkingBudget);
    this.showThinkingBudgetLimits();
    this.sampling.show(settings);
    this.stops.show(settings.stop, this.limits.stopStrings);
    if (this.showSamplingChanged() > 0) this.moreSampling.open = true;
    this.systemPrompt.value = settings.systemPrompt;
    this.apiKey.value = settings.apiKey;
    for (const radio of this.detailRadios()) {
      radio.checked = radio.value === settings.detail;
    }
    for (const radio of this.form.querySelectorAll<HTMLInputElement>('input[name="answer-format"]')) {
      radio.checked = radio.value === settings.answerFormat;
    }
    this.jsonSchema.value = settings.jsonSchema;
    this.showJsonSchema();
  }

  /** The schema box, for "JSON with a schema" only, with what is wrong with its text. */
  private showJsonSchema(): void {
    const wanted = this.settings.answerFormat === "json_schema";
    this.jsonSchemaField.hidden = !wanted;
    const check = checkJsonSchema(this.settings.jsonSchema);
    const error = wanted && "error" in check ? check.error : "";
    this.jsonSchemaError.textContent = error;
    this.jsonSchemaError.hidden = !error;
    this.jsonSchema.setAttribute("aria-invalid", String(Boolean(error)));
  }

  private showTemperature(): void {
    const chosen = this.settings.temperature;
    const serverDefault = this.defaults.temperature;
    this.temperature.value = String(chosen ?? serverDefault ?? QWEN3_VL_SAMPLING.temperature);
    this.temperatureValue.value =
      chosen !== null
        ? chosen.toFixed(2)
        : serverDefault !== undefined
          ? `${serverDefault.toFixed(2)}, the server's default`
          : "the server's default";
    this.temperatureDefault.hidden = chosen === null;
  }

  private showMaxTokensLimits(): void {
    const { contextTokens, defaultAnswerTokens } = this.limits;
    this.maxTokens.max = String(contextTokens);
    this.maxTokens.placeholder = `Server default (${defaultAnswerTokens})`;
    this.maxTokensHint.textContent =
      `About ¾ of a word each; long text extraction may need 2000 or more. Empty: the server's default, ` +
      `${defaultAnswerTokens} or what the conversation leaves of its ${contextTokens}.`;
  }

  // The page cannot tell before an answer whether the served model thinks, so the box
  // is always there and says which models it is for.
  private showThinkingBudgetLimits(): void {
    const { contextTokens, defaultThinkingTokens } = this.limits;
    this.thinkingBudget.max = String(contextTokens);
    this.thinkingBudget.placeholder = `Server default (${defaultThinkingTokens ?? "none"})`;
    const serverDefault =
      defaultThinkingTokens === null
        ? "none: it thinks until the answer's length runs out"
        : `${defaultThinkingTokens} tokens`;
    this.thinkingBudgetHint.textContent =
      `Only for models that think (Qwen3-VL Thinking): after this many tokens of reasoning the model stops ` +
      `thinking and answers (0: no thinking). Other models ignore it. Empty: the server's default, ` +
      `${serverDefault}.`;
  }

  /** "2 changed" beside "More sampling settings"; returns the count. */
  private showSamplingChanged(): number {
    const changed =
      MORE_SAMPLING_FIELDS.filter((field) => this.settings[field.key] !== null).length +
      (this.settings.stop.length > 0 ? 1 : 0);
    this.samplingChanged.textContent = changed > 0 ? `${changed} changed` : "";
    return changed;
  }

  private showConversationPrompt(): void {
    const own = this.conversationPrompt()?.trim();
    const differs = own !== undefined && own !== this.settings.systemPrompt.trim();
    this.conversationPromptNote.hidden = !differs;
    if (!differs) return;
    const quoted = own.length > QUOTED_PROMPT_CHARACTERS ? `${own.slice(0, QUOTED_PROMPT_CHARACTERS - 1)}…` : own;
    this.conversationPromptNote.textContent = own
      ? `The conversation on screen keeps the instructions it started with: “${quoted}”`
      : "The conversation on screen started without instructions and keeps it that way.";
  }

  private detailRadios(): HTMLInputElement[] {
    return [...this.form.querySelectorAll<HTMLInputElement>('input[name="detail"]')];
  }

  // The words sit in the <span> after each radio, inside its <label>, so the radio's
  // accessible name changes with them.
  private showDetailLabels(): void {
    for (const radio of this.detailRadios()) {
      const words = radio.nextElementSibling;
      if (words) words.textContent = detailLabel(radio.value as ImageDetail, this.limits);
    }
  }

  /** Takes what `target` holds into its setting; `stopsChanged`: a stop string box was
   * added or removed. */
  private read(target: EventTarget | null, stopsChanged = false): void {
    if (target === this.temperature) {
      this.change({ temperature: Number(this.temperature.value) });
    } else if (target === this.maxTokens) {
      this.change({ maxTokens: this.typedCount(this.maxTokens, 1, this.settings.maxTokens) });
    } else if (target === this.thinkingBudget) {
      this.change({ thinkingBudget: this.typedCount(this.thinkingBudget, 0, this.settings.thinkingBudget) });
    } else if (target === this.systemPrompt) {
      this.change({ systemPrompt: this.systemPrompt.value });
    } else if (target === this.jsonSchema) {
      this.change({ jsonSchema: this.jsonSchema.value });
    } else if (target instanceof HTMLInputElement && target.name === "answer-format") {
      this.change({ answerFormat: target.value as AnswerFormat });
    } else if (target === this.apiKey) {
      this.change({ apiKey: this.apiKey.value });
    } else if (target instanceof HTMLInputElement && target.name === "detail") {
      this.change({ detail: target.value as ImageDetail });
    } else if (this.sampling.keyOf(target)) {
      const key = this.sampling.keyOf(target)!;
      const value = this.sampling.read(key);
      if (value !== undefined) this.change({ [key]: value });
    } else if (stopsChanged || this.stops.owns(target)) {
      const stop = this.stops.read();
      if (stop) this.change({ stop });
    }
  }

  // A token count typed in `box`: empty is the server's default; a number over the
  // server's context is cut to it; anything else (a sign or a fraction while typing,
  // which the browser reports as bad input or an empty value) keeps `inForce`. The box
  // shows the value in force when it loses focus.
  private typedCount(box: HTMLInputElement, minimum: number, inForce: number | null): number | null {
    const text = box.value.trim();
    const typed = Number(text);
    if (text === "" && !box.validity.badInput) return null;
    return Number.isInteger(typed) && typed >= minimum ? Math.min(typed, this.limits.contextTokens) : inForce;
  }

  private change(changes: Partial<Settings>): void {
    const next = normalizeSettings({ ...this.settings, ...changes }, this.limits);
    this.settings = next;
    this.showTemperature();
    this.showSamplingChanged();
    this.showConversationPrompt();
    this.showJsonSchema();
    this.onChange(next);
  }
}

function countText(count: number | null): string {
  return count === null ? "" : String(count);
}

/** A click on the dimmed area outside a modal dialog closes it. */
export function closeOnBackdropClick(dialog: HTMLDialogElement): void {
  dialog.addEventListener("click", (event) => {
    if (event.target !== dialog) return;
    const box = dialog.getBoundingClientRect();
    const inside =
      event.clientX >= box.left &&
      event.clientX <= box.right &&
      event.clientY >= box.top &&
      event.clientY <= box.bottom;
    if (!inside) dialog.close();
  });
}
