// What a person can change in the settings drawer, kept in localStorage. Loading is
// forgiving: a field that is missing or out of range falls back to its default, so an
// old or hand-edited entry never breaks the page.
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "./api/server_limits";
import { detailMaxPixels } from "./image_detail";

export type ImageDetail = "auto" | "low" | "medium" | "high";

export interface Settings {
  temperature: number;
  /** null: the server's own default (`--max-tokens`, or what the context leaves). */
  maxTokens: number | null;
  detail: ImageDetail;
  systemPrompt: string;
  /** Sent as a bearer token; only needed when the server was started with a key. */
  apiKey: string;
}

export const DEFAULT_SETTINGS: Settings = {
  temperature: 0.7,
  maxTokens: null,
  detail: "auto",
  systemPrompt: "",
  apiKey: "",
};

const STORAGE_KEY = "qvl.settings";
// Pages before the server's default was the page's default saved this value with every
// change of any setting: read as "not chosen", or it would override `--max-tokens` and
// refuse long prompts the server could still answer.
const OLD_DEFAULT_MAX_TOKENS = 2048;
const SETTINGS_VERSION = 2;

/** `maxTokensLimit`: the server's context (`/props`), an answer can be no longer. */
export function normalizeSettings(raw: unknown, maxTokensLimit = DEFAULT_SERVER_LIMITS.contextTokens): Settings {
  const value = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  const temperature = Number(value.temperature);
  const maxTokens = Number(value.maxTokens);
  const detail = value.detail;
  return {
    temperature:
      Number.isFinite(temperature) && temperature >= 0 && temperature <= 2 ? temperature : DEFAULT_SETTINGS.temperature,
    maxTokens:
      value.maxTokens !== null && Number.isInteger(maxTokens) && maxTokens >= 1 && maxTokens <= maxTokensLimit
        ? maxTokens
        : DEFAULT_SETTINGS.maxTokens,
    detail:
      detail === "auto" || detail === "low" || detail === "medium" || detail === "high"
        ? detail
        : DEFAULT_SETTINGS.detail,
    systemPrompt: typeof value.systemPrompt === "string" ? value.systemPrompt : DEFAULT_SETTINGS.systemPrompt,
    apiKey: typeof value.apiKey === "string" ? value.apiKey.trim() : DEFAULT_SETTINGS.apiKey,
  };
}

export function loadSettings(storage: Storage): Settings {
  try {
    const text = storage.getItem(STORAGE_KEY);
    const stored: unknown = text ? JSON.parse(text) : {};
    const settings = normalizeSettings(stored);
    const version = typeof stored === "object" && stored !== null ? (stored as { version?: unknown }).version : 0;
    if (version !== SETTINGS_VERSION && settings.maxTokens === OLD_DEFAULT_MAX_TOKENS) settings.maxTokens = null;
    return settings;
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function saveSettings(storage: Storage, settings: Settings): void {
  try {
    storage.setItem(STORAGE_KEY, JSON.stringify({ ...settings, version: SETTINGS_VERSION }));
  } catch {
    // Storage full or disabled: settings then last for this visit only.
  }
}

/** Headers for every API request. */
export function apiHeaders(settings: Settings): Record<string, string> {
  return settings.apiKey ? { Authorization: `Bearer ${settings.apiKey}` } : {};
}

/** The request fields that carry the settings (system prompt goes into messages);
 * `limits`: the server's, which size the image detail. */
export function requestOptions(
  settings: Settings,
  limits: ServerLimits,
): {
  temperature: number;
  max_tokens?: number;
  max_pixels?: number;
} {
  const options: { temperature: number; max_tokens?: number; max_pixels?: number } = {
    temperature: settings.temperature,
  };
  if (settings.maxTokens !== null) options.max_tokens = settings.maxTokens;
  const maxPixels = detailMaxPixels(settings.detail, limits);
  if (maxPixels !== undefined) options.max_pixels = maxPixels;
  return options;
}
