// What a person can change in the settings drawer, kept in localStorage. Loading is
// forgiving: a field that is missing or out of range falls back to its default, so an
// old or hand-edited entry never breaks the page.
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "./api/server_limits";
import { detailMaxPixels } from "./image_detail";

export type ImageDetail = "auto" | "low" | "medium" | "high";

export interface Settings {
  temperature: number;
  maxTokens: number;
  detail: ImageDetail;
  systemPrompt: string;
  /** Sent as a bearer token; only needed when the server was started with a key. */
  apiKey: string;
}

export const DEFAULT_SETTINGS: Settings = {
  temperature: 0.7,
  maxTokens: 2048,
  detail: "auto",
  systemPrompt: "",
  apiKey: "",
};

const STORAGE_KEY = "qvl.settings";

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
      Number.isInteger(maxTokens) && maxTokens >= 1 && maxTokens <= maxTokensLimit
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
    return normalizeSettings(text ? JSON.parse(text) : {});
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function saveSettings(storage: Storage, settings: Settings): void {
  try {
    storage.setItem(STORAGE_KEY, JSON.stringify(settings));
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
  max_tokens: number;
  max_pixels?: number;
} {
  const options: { temperature: number; max_tokens: number; max_pixels?: number } = {
    temperature: settings.temperature,
    max_tokens: settings.maxTokens,
  };
  const maxPixels = detailMaxPixels(settings.detail, limits);
  if (maxPixels !== undefined) options.max_pixels = maxPixels;
  return options;
}
