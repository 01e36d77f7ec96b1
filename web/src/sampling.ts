// The sampling settings a person may change, one table for their request fields, the
// ranges qvl accepts (src/engine/request_ranges.h; a value outside is a 400) and their
// words. Each one left alone is not sent, so the server's own default applies: the
// model's generation_config.json, as GET /props reports it.
import type { SamplingParams } from "./api/types";

export type SamplingKey =
  "temperature" | "topP" | "topK" | "minP" | "repetitionPenalty" | "presencePenalty" | "frequencyPenalty" | "seed";

export interface SamplingField {
  key: SamplingKey;
  /** The chat-completions request field. */
  param: keyof SamplingParams;
  /** Its name in /props `default_generation_settings.params` (llama-server's); none for
   * the seed, which is random unless given. */
  propsParam?: string;
  min: number;
  max: number;
  /** (min, max] rather than [min, max]. */
  minExclusive?: boolean;
  integer?: boolean;
}

/** A field with a number box of its own in the drawer. */
export interface SamplingBox extends SamplingField {
  label: string;
  /** The box's arrow step. */
  step: string;
  /** What it does, in a few words. */
  hint: string;
}

/** The drawer's slider, whose words are index.html's. */
export const TEMPERATURE: SamplingField = {
  key: "temperature",
  param: "temperature",
  propsParam: "temperature",
  min: 0,
  max: 2,
};

/** The fields under "More sampling settings", in the drawer's order. */
export const MORE_SAMPLING_FIELDS: readonly SamplingBox[] = [
  {
    key: "topP",
    param: "top_p",
    propsParam: "top_p",
    label: "Top P",
    min: 0,
    max: 1,
    minExclusive: true,
    step: "0.05",
    hint: "Picks among the likeliest words that together reach this share; lower is more focused.",
  },
  {
    key: "topK",
    param: "top_k",
    propsParam: "top_k",
    label: "Top K",
    min: -1,
    max: 1 << 20,
    integer: true,
    step: "1",
    hint: "Picks among this many likeliest words; 0 means no limit.",
  },
  {
    key: "minP",
    param: "min_p",
    propsParam: "min_p",
    label: "Min P",
    min: 0,
    max: 1,
    step: "0.01",
    hint: "Leaves out words less likely than this share of the likeliest one; 0 is off.",
  },
  {
    key: "repetitionPenalty",
    param: "repetition_penalty",
    propsParam: "repeat_penalty",
    label: "Repetition penalty",
    min: 0,
    max: 10,
    minExclusive: true,
    step: "0.05",
    hint: "Above 1 makes words already used less likely; 1 is off.",
  },
  {
    key: "presencePenalty",
    param: "presence_penalty",
    propsParam: "presence_penalty",
    label: "Presence penalty",
    min: -2,
    max: 2,
    step: "0.1",
    hint: "Above 0 makes any word already used less likely; 0 is off.",
  },
  {
    key: "frequencyPenalty",
    param: "frequency_penalty",
    propsParam: "frequency_penalty",
    label: "Frequency penalty",
    min: -2,
    max: 2,
    step: "0.1",
    hint: "Above 0 makes a word less likely the more often it was used; 0 is off.",
  },
  {
    key: "seed",
    param: "seed",
    label: "Seed",
    min: 0,
    // Larger whole numbers do not survive a JavaScript number.
    max: Number.MAX_SAFE_INTEGER,
    integer: true,
    step: "1",
    hint: "The same seed, settings and question give the same answer again.",
  },
];

export const SAMPLING_FIELDS: readonly SamplingField[] = [TEMPERATURE, ...MORE_SAMPLING_FIELDS];

export function inRange(field: SamplingField, value: number): boolean {
  if (!Number.isFinite(value) || (field.integer && !Number.isInteger(value))) return false;
  return (field.minExclusive ? value > field.min : value >= field.min) && value <= field.max;
}

// A minus sign, which screen readers say as "minus" (a hyphen may be read as "dash").
function signed(value: number): string {
  return value < 0 ? `\u2212${-value}` : String(value);
}

/** "between −2 and 2", "more than 0 and at most 1", "a whole number, 0 or more". */
export function rangeWords(field: SamplingField): string {
  const [min, max] = [signed(field.min), signed(field.max)];
  if (field.integer) {
    return field.max >= Number.MAX_SAFE_INTEGER
      ? `a whole number, ${min} or more`
      : `a whole number from ${min} to ${max}`;
  }
  return field.minExclusive ? `more than ${min} and at most ${max}` : `between ${min} and ${max}`;
}

/** A typed value: null for an empty box (the server's default), undefined when it is
 * not a value the server takes. */
export function parseSamplingText(field: SamplingField, text: string): number | null | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const value = Number(trimmed);
  return inRange(field, value) ? value : undefined;
}

/** The sampling a request that sets nothing gets. */
export type SamplingDefaults = Partial<Record<SamplingKey, number>>;

/** What `qvl serve` gives Qwen3-VL (its generation_config.json), until /props says. */
export const QWEN3_VL_SAMPLING: Readonly<SamplingDefaults> = {
  temperature: 0.7,
  topP: 0.8,
  topK: 20,
  minP: 0,
  repetitionPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
};

/** The defaults in a /props body (`default_generation_settings.params`); one missing or
 * out of range is left out, and the page then names no figure for it. */
export function parseSamplingDefaults(props: unknown): SamplingDefaults {
  const settings = (props as { default_generation_settings?: { params?: unknown } } | null)
    ?.default_generation_settings;
  const params = typeof settings?.params === "object" && settings.params !== null ? settings.params : {};
  const defaults: SamplingDefaults = {};
  for (const field of SAMPLING_FIELDS) {
    if (!field.propsParam) continue;
    const value = (params as Record<string, unknown>)[field.propsParam];
    if (typeof value === "number" && inRange(field, value)) defaults[field.key] = value;
  }
  return defaults;
}

/** The longest stop string qvl takes, in UTF-8 bytes. */
export const MAX_STOP_BYTES = 512;

export function stopBytes(stop: string): number {
  return new TextEncoder().encode(stop).length;
}

// Stop strings are typed in one-line boxes, where a line break or a tab cannot be typed:
// they are written \n and \t (and a backslash \\).
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", "\\": "\\" };

/** A stop string as typed ("\n\n" for two line breaks) -> the string itself. */
export function stopFromText(text: string): string {
  return text.replace(/\\([nt\\])/g, (_, letter: string) => ESCAPES[letter]);
}

/** The inverse of stopFromText: a stop string as its box shows it. */
export function stopToText(stop: string): string {
  return stop.replace(/[\\\n\t]/g, (c) => (c === "\\" ? "\\\\" : c === "\n" ? "\\n" : "\\t"));
}
