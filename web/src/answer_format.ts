// The answer format chosen in the settings, sent as the request's response_format: plain
// text (nothing sent), any JSON object, or JSON that follows a schema pasted in the
// settings. The server constrains its output to match, so the answer parses.
import type { ResponseFormat } from "./conversation";

export type AnswerFormat = "text" | "json" | "json_schema";

export type ResponseFormatBody =
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; schema: Record<string, unknown>; strict: true } };

export type SchemaCheck = { schema: Record<string, unknown> } | { error: string };

/** Whether `text` is a JSON schema the request can carry: a JSON object. */
export function checkJsonSchema(text: string): SchemaCheck {
  if (!text.trim()) return { error: "Paste a JSON schema, or choose another answer format." };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `This is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: 'A JSON schema is an object, such as {"type": "object", "properties": {…}}.' };
  }
  return { schema: value as Record<string, unknown> };
}

/** The schema's name in the request: its title where it has one OpenAI would take
 * (letters, digits, _ and -, up to 64), else "answer". */
export function schemaName(schema: Record<string, unknown>): string {
  const title = typeof schema.title === "string" ? schema.title.trim().replace(/[^A-Za-z0-9_-]+/g, "_") : "";
  return title.slice(0, 64) || "answer";
}

/** Why no question can be sent in `format` (its schema is not one), if so. */
export function answerFormatProblem(format: AnswerFormat, schemaText: string): string | undefined {
  if (format !== "json_schema") return undefined;
  const check = checkJsonSchema(schemaText);
  return "error" in check ? `Fix the JSON schema in the settings first. ${check.error}` : undefined;
}

export class SchemaError extends Error {}

/** What the answer to a question is asked to be: the settings' format, or where that is
 * text, the question's own (the JSON suggestion asks for a JSON object). */
export function answerFormatFor(settingsFormat: AnswerFormat, question?: ResponseFormat): ResponseFormat | undefined {
  if (settingsFormat === "json") return "json_object";
  if (settingsFormat === "json_schema") return "json_schema";
  return question;
}

/** The request's response_format for `format`; throws SchemaError when the settings'
 * schema is not one. */
export function responseFormatBody(format: ResponseFormat, schemaText: string): ResponseFormatBody {
  if (format === "json_object") return { type: "json_object" };
  const check = checkJsonSchema(schemaText);
  if ("error" in check) throw new SchemaError(`The JSON schema in the settings cannot be sent. ${check.error}`);
  return { type: "json_schema", json_schema: { name: schemaName(check.schema), schema: check.schema, strict: true } };
}
