// The settings drawer. Every change is applied and saved at once; there is no
// separate save button to forget.
import { byId } from "../dom";
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "../api/server_limits";
import { detailLabel } from "../image_detail";
import { DEFAULT_SETTINGS, normalizeSettings, type ImageDetail, type Settings } from "../settings";

export class SettingsDialog {
  private readonly dialog = byId<HTMLDialogElement>("settings-dialog");
  private readonly form = byId<HTMLFormElement>("settings-form");
  private readonly temperature = byId<HTMLInputElement>("temperature");
  private readonly temperatureValue = byId<HTMLOutputElement>("temperature-value");
  private readonly maxTokens = byId<HTMLInputElement>("max-tokens");
  private readonly maxTokensHint = byId<HTMLParagraphElement>("max-tokens-hint");
  private readonly systemPrompt = byId<HTMLTextAreaElement>("system-prompt");
  private readonly apiKey = byId<HTMLInputElement>("api-key");
  private readonly apiKeyStatus = byId<HTMLParagraphElement>("api-key-status");
  private askingForKey = false;
  private limits: ServerLimits = DEFAULT_SERVER_LIMITS;

  constructor(
    private settings: Settings,
    private readonly onChange: (settings: Settings) => void,
  ) {
    this.show(settings);
    this.showDetailLabels();
    this.form.addEventListener("input", () => this.read());
    this.form.addEventListener("change", () => this.read());
    this.maxTokens.addEventListener("blur", () => (this.maxTokens.value = maxTokensText(this.settings)));
    byId<HTMLButtonElement>("settings-reset").addEventListener("click", () => {
      this.show({ ...DEFAULT_SETTINGS });
      this.read();
    });
    closeOnBackdropClick(this.dialog);
  }

  /** The server's limits (from /props, which may answer after the drawer was built):
   * the longest answer it could give (its context), and each image detail's budget. */
  setServerLimits(limits: ServerLimits): void {
    this.limits = limits;
    this.showMaxTokensLimits();
    this.showDetailLabels();
  }

  open(): void {
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** Opens the settings at the API key field and says why. */
  askForKey(message: string): void {
    this.apiKeyStatus.textContent = message;
    this.apiKeyStatus.hidden = false;
    this.askingForKey = true;
    if (this.dialog.open) return;
    this.dialog.showModal();
    this.apiKey.focus({ preventScroll: true });
    this.apiKey.select();
    // The field is the last one: bring it into view with the message under it.
    this.apiKeyStatus.scrollIntoView({ block: "nearest" });
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
    this.temperature.value = String(settings.temperature);
    this.temperatureValue.value = settings.temperature.toFixed(2);
    this.maxTokens.value = maxTokensText(settings);
    this.showMaxTokensLimits();
    this.systemPrompt.value = settings.systemPrompt;
    this.apiKey.value = settings.apiKey;
    for (const radio of this.detailRadios()) {
      radio.checked = radio.value === settings.detail;
    }
  }

  private showMaxTokensLimits(): void {
    const { contextTokens, defaultAnswerTokens } = this.limits;
    this.maxTokens.max = String(contextTokens);
    this.maxTokens.placeholder = `Server default (${defaultAnswerTokens})`;
    this.maxTokensHint.textContent =
      `About ¾ of a word each; long text extraction may need 2000 or more. Empty: the server's default, ` +
      `${defaultAnswerTokens} or what the conversation leaves of its ${contextTokens}.`;
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

  private read(): void {
    const detail = this.form.querySelector<HTMLInputElement>('input[name="detail"]:checked')?.value;
    // An empty box is the server's default; a number over the server's context is cut to
    // it; anything else (a sign or a fraction while typing, which the browser reports as
    // bad input or an empty value) keeps the value in force. The box shows the value in
    // force when it loses focus.
    const text = this.maxTokens.value.trim();
    const typed = Number(text);
    const maxTokens =
      text === "" && !this.maxTokens.validity.badInput
        ? null
        : Number.isInteger(typed) && typed >= 1
          ? Math.min(typed, this.limits.contextTokens)
          : this.settings.maxTokens;
    const next = normalizeSettings(
      {
        temperature: Number(this.temperature.value),
        maxTokens,
        detail,
        systemPrompt: this.systemPrompt.value,
        apiKey: this.apiKey.value,
      },
      this.limits.contextTokens,
    );
    this.settings = next;
    this.temperatureValue.value = next.temperature.toFixed(2);
    this.onChange(next);
  }
}

function maxTokensText(settings: Settings): string {
  return settings.maxTokens === null ? "" : String(settings.maxTokens);
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
