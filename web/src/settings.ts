// What a person can change in the settings drawer, kept in localStorage. Loading is
// forgiving: a field that is missing or out of range falls back to its default, so an
// old or hand-edited entry never breaks the page.
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "./api/server_limits";
import type { ChatRequestBody, SamplingParams } from "./api/types";
import type { AnswerFormat } from "./answer_format";
import { detailMaxPixels } from "./image_detail";
import { inRange, MAX_STOP_BYTES, SAMPLING_FIELDS, stopBytes, type SamplingKey } from "./sampling";

export type ImageDetail = "auto" | "low" | "medium" | "high";

/** null: the server's own default (see sampling.ts). */
export type SamplingChoices = Record<SamplingKey, number | null>;

export interface Settings extends SamplingChoices {
  /** null: the server's own default (`--max-tokens`, or what the context leaves). */
  maxTokens: number | null;
  /** A thinking model's reasoning, in tokens, before it must answer; null: the server's
   * own default (`--thinking-budget`, or none). */
  thinkingBudget: number | null;
  /** Empty: none. Sent up to the server's `max_stop_strings`. */
  stop: string[];
  detail: ImageDetail;
  /** The instructions new conversations start with; each conversation keeps its own. */
  systemPrompt: string;
  /** Sent as a bearer token; only needed when the server was started with a key. */
  apiKey: string;
  /** What every answer is asked to be (answer_format.ts). */
  answerFormat: AnswerFormat;
  /** The schema for "json_schema", as pasted: checked when sent. */
  jsonSchema: string;
}

export const DEFAULT_SETTINGS: Readonly<Settings> = {
  temperature: null,
  topP: null,
  topK: null,
  minP: null,
  repetitionPenalty: null,
  presencePenalty: null,
  frequencyPenalty: null,
  seed: null,
  maxTokens: null,
  thinkingBudget: null,
  stop: [],
  detail: "auto",
  systemPrompt: "",
  apiKey: "",
  answerFormat: "text",
  jsonSchema: "",
};

const STORAGE_KEY = "qvl.settings";
// Pages before version 2 saved the page's default answer length, and pages before
// version 3 its temperature, with every change of any setting: read as "not chosen", or
// they would override the server's `--max-tokens` and the model's own temperature.
const OLD_DEFAULT_MAX_TOKENS = 2048;
const OLD_DEFAULT_TEMPERATURE = 0.7;
const SETTINGS_VERSION = 3;

function usableStop(value: unknown): value is string {
  return typeof value === "string" && value !== "" && stopBytes(value) <= MAX_STOP_BYTES;
}

/** A stored token count of at least `minimum`, cut to `limits`' context; null when there
 * is none or it is malformed. A number in a string counts; a blank one is none, not 0. */
function tokenCount(stored: unknown, minimum: number, limits: ServerLimits): number | null {
  const count = typeof stored === "string" && stored.trim() !== "" ? Number(stored) : stored;
  return typeof count === "number" && Number.isInteger(count) && count >= minimum
    ? Math.min(count, limits.contextTokens)
    : null;
}

/** `limits`: the server's (`/props`); an answer, and so its reasoning, can be no longer
 * than its context, and a longer one is cut to it. */
export function normalizeSettings(raw: unknown, limits: ServerLimits = DEFAULT_SERVER_LIMITS): Settings {
  const value = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  const detail = value.detail;
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    maxTokens: tokenCount(value.maxTokens, 1, limits),
    // 0 is a budget: the model answers without reasoning.
    thinkingBudget: tokenCount(value.thinkingBudget, 0, limits),
    // Kept beyond the server's count, which /props may raise after loading.
    stop: Array.isArray(value.stop) ? value.stop.filter(usableStop) : [],
    detail:
      detail === "auto" || detail === "low" || detail === "medium" || detail === "high"
        ? detail
        : DEFAULT_SETTINGS.detail,
    systemPrompt: typeof value.systemPrompt === "string" ? value.systemPrompt : DEFAULT_SETTINGS.systemPrompt,
    apiKey: typeof value.apiKey === "string" ? value.apiKey.trim() : DEFAULT_SETTINGS.apiKey,
    answerFormat: value.answerFormat === "json" || value.answerFormat === "json_schema" ? value.answerFormat : "text",
    jsonSchema: typeof value.jsonSchema === "string" ? value.jsonSchema : DEFAULT_SETTINGS.jsonSchema,
  };
  for (const field of SAMPLING_FIELDS) {
    const chosen = value[field.key];
    settings[field.key] = typeof chosen === "number" && inRange(field, chosen) ? chosen : null;
  }
  return settings;
}

export function loadSettings(storage: Storage): Settings {
  try {
    const text = storage.getItem(STORAGE_KEY);
    const stored: unknown = text ? JSON.parse(text) : {};
    const settings = normalizeSettings(stored);
    const version = Number((stored as { version?: unknown } | null)?.version ?? 0);
    if (!(version >= 2) && settings.maxTokens === OLD_DEFAULT_MAX_TOKENS) settings.maxTokens = null;
    if (!(version >= 3) && settings.temperature === OLD_DEFAULT_TEMPERATURE) settings.temperature = null;
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

type RequestOptions = SamplingParams &
  Pick<ChatRequestBody, "stop" | "max_tokens" | "thinking_token_budget" | "max_pixels">;

/** The request fields that carry the settings (the system prompt goes into messages):
 * only those chosen, so the server's defaults apply to the rest; `limits`: the
 * server's, which size the image detail and cap the stop strings. */
export function requestOptions(settings: Settings, limits: ServerLimits): RequestOptions {
  const options: RequestOptions = {};
  for (const field of SAMPLING_FIELDS) {
    const value = settings[field.key];
    if (value !== null) options[field.param] = value;
  }
  const stop = settings.stop.slice(0, limits.stopStrings);
  if (stop.length > 0) options.stop = stop;
  if (settings.maxTokens !== null) options.max_tokens = settings.maxTokens;
  if (settings.thinkingBudget !== null) options.thinking_token_budget = settings.thinkingBudget;
  const maxPixels = detailMaxPixels(settings.detail, limits);
  if (maxPixels !== undefined) options.max_pixels = maxPixels;
  return options;
}
