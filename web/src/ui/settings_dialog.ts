// The settings drawer. Every change is applied and saved at once; there is no
// separate save button to forget.
import { byId } from "../dom";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { DEFAULT_SETTINGS, normalizeSettings, type Settings } from "../settings";

export class SettingsDialog {
  private readonly dialog = byId<HTMLDialogElement>("settings-dialog");
  private readonly form = byId<HTMLFormElement>("settings-form");
  private readonly temperature = byId<HTMLInputElement>("temperature");
  private readonly temperatureValue = byId<HTMLOutputElement>("temperature-value");
  private readonly maxTokens = byId<HTMLInputElement>("max-tokens");
  private readonly systemPrompt = byId<HTMLTextAreaElement>("system-prompt");
  private readonly apiKey = byId<HTMLInputElement>("api-key");
  private readonly apiKeyStatus = byId<HTMLParagraphElement>("api-key-status");
  private askingForKey = false;
  private maxTokensLimit = DEFAULT_SERVER_LIMITS.contextTokens;

  constructor(
    private settings: Settings,
    private readonly onChange: (settings: Settings) => void,
  ) {
    this.show(settings);
    this.form.addEventListener("input", () => this.read());
    this.form.addEventListener("change", () => this.read());
    this.maxTokens.addEventListener("blur", () => (this.maxTokens.value = String(this.settings.maxTokens)));
    byId<HTMLButtonElement>("settings-reset").addEventListener("click", () => {
      this.show({ ...DEFAULT_SETTINGS });
      this.read();
    });
    closeOnBackdropClick(this.dialog);
  }

  /** The longest answer the server could give (its context, from /props). */
  setMaxTokensLimit(limit: number): void {
    this.maxTokensLimit = limit;
    this.maxTokens.max = String(limit);
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
    this.maxTokens.value = String(settings.maxTokens);
    this.maxTokens.max = String(this.maxTokensLimit);
    this.systemPrompt.value = settings.systemPrompt;
    this.apiKey.value = settings.apiKey;
    for (const radio of this.form.querySelectorAll<HTMLInputElement>('input[name="detail"]')) {
      radio.checked = radio.value === settings.detail;
    }
  }

  private read(): void {
    const detail = this.form.querySelector<HTMLInputElement>('input[name="detail"]:checked')?.value;
    // An unfinished or out-of-range number (an empty box while typing) keeps the
    // previous value; the box shows the value in force when it loses focus.
    const typed = Number(this.maxTokens.value);
    const maxTokens =
      Number.isInteger(typed) && typed >= 1 && typed <= this.maxTokensLimit ? typed : this.settings.maxTokens;
    const next = normalizeSettings(
      {
        temperature: Number(this.temperature.value),
        maxTokens,
        detail,
        systemPrompt: this.systemPrompt.value,
        apiKey: this.apiKey.value,
      },
      this.maxTokensLimit,
    );
    this.settings = next;
    this.temperatureValue.value = next.temperature.toFixed(2);
    this.onChange(next);
  }
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
