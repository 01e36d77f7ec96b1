// Turns failures into words for someone who has never seen an HTTP status: a short
// title saying what happened and what to do, and the server's own message as detail.

export class ChatError extends Error {
  constructor(
    readonly title: string,
    readonly detail: string,
    readonly status = 0,
    /** The OpenAI error's `param`: the request field at fault ("messages[0].content[1]..."). */
    readonly param = "",
    /** The OpenAI error's `code` ("context_length_exceeded"), or "". */
    readonly code = "",
    /** How long a busy server asked to be left before the next try (Retry-After); 0 if it did not. */
    readonly retryAfterMs = 0,
  ) {
    super(detail ? `${title} ${detail}` : title);
    this.name = "ChatError";
  }
}

/** The `error.message` of an OpenAI error object, or "" when the body is not one. */
export function serverMessage(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const error = (body as { error?: unknown }).error;
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string") return message;
  }
  return "";
}

/** OpenAI's code for a prompt (or prompt and max_tokens) over the model's context. */
export const CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";
const CONVERSATION_TOO_LONG =
  "The conversation is too long for the model: it no longer fits in the server's context. Start a new conversation, or ask something shorter.";

export function titleForStatus(status: number): string {
  switch (status) {
    case 400:
      return "The server could not use this request.";
    case 401:
    case 403:
      return "The server needs an API key: enter it in Settings.";
    case 404:
      return "This server has no chat API at /v1/chat/completions.";
    case 413:
      // The bytes are what is too large: image detail changes the tokens, not the upload.
      return "The images or the message are too large for the server. Try a smaller image, or start a new conversation with fewer images.";
    case 429:
      return "The server is busy with other requests. Please try again in a moment.";
    case 503:
      return "The server is busy or still starting. Please try again in a moment.";
    default:
      return status >= 500 ? "The server failed to answer." : `The server answered with status ${status}.`;
  }
}

/** A string field of an OpenAI error object (`param`, `code`), or "". */
function errorField(body: unknown, field: "param" | "code"): string {
  const error = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
  const value = typeof error === "object" && error !== null ? (error as Record<string, unknown>)[field] : undefined;
  return typeof value === "string" ? value : "";
}

/** Reads an error response; works whether or not its body is JSON. */
export async function errorFromResponse(response: Response): Promise<ChatError> {
  let detail = "";
  let param = "";
  let code = "";
  try {
    const text = await response.text();
    try {
      const body: unknown = JSON.parse(text);
      detail = serverMessage(body);
      param = errorField(body, "param");
      code = errorField(body, "code");
    } catch {
      detail = text.trim().slice(0, 300);
    }
  } catch {
    // The body could not be read; the status alone has to do.
  }
  const title = code === CONTEXT_LENGTH_EXCEEDED ? CONVERSATION_TOO_LONG : titleForStatus(response.status);
  return new ChatError(title, detail, response.status, param, code, retryAfterMs(response));
}

/** A response's Retry-After in milliseconds (its seconds form), or 0 when it has none. */
export function retryAfterMs(response: Response): number {
  const seconds = Number(response.headers.get("Retry-After"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

// The browser's own words ("Failed to fetch", "NetworkError when attempting to fetch
// resource.") tell a person nothing more than the title.
export function networkError(): ChatError {
  return new ChatError("Cannot reach the qvl server. Check that it is still running.", "");
}
