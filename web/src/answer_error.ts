// What an answer that failed says: the server's words for its refusal, or the page's.
import { videoForParam } from "./api/chat_request";
import { SchemaError } from "./answer_format";
import { ChatError } from "./api/errors";
import type { ChatRequestBody } from "./api/types";
import { videosBefore, type AnswerError, type Message } from "./conversation";
import { ImageError } from "./images/prepare";
import { formatBytes } from "./videos/formats";
import { VideoError } from "./videos/prepare";

/** Whether the server asks for an API key, or refused the one given. */
export function refusesKey(status: number): boolean {
  return status === 401 || status === 403;
}

/** A 413 names the file: the one the server's `param` points at, else the request's videos. */
function tooLargeTitle(body: ChatRequestBody | undefined, branch: Message[], param: string): string | undefined {
  if (!body) return undefined;
  const named = videoForParam(body, branch, param);
  const videos = named ? [named] : param ? [] : videosBefore(branch, branch.length);
  if (videos.length === 0) return undefined;
  const names = videos.map((video) => `"${video.name}" (${formatBytes(video.bytes)})`).join(", ");
  return videos.length === 1
    ? `The video ${names} is too large for this server. Trim or compress it; the server's operator can raise the limit.`
    : `The videos ${names} are too large for this server together. Start a new conversation with fewer or smaller videos.`;
}

/** `branch`: the messages the request `body` was built from. */
export function toAnswerError(error: unknown, body?: ChatRequestBody, branch?: Message[]): AnswerError {
  if (error instanceof ChatError) {
    const title = error.status === 413 && branch ? tooLargeTitle(body, branch, error.param) : undefined;
    const answer: AnswerError = { title: title ?? error.title, detail: error.detail };
    if (error.status) answer.status = error.status;
    if (error.code) answer.code = error.code;
    return answer;
  }
  if (error instanceof ImageError || error instanceof VideoError || error instanceof SchemaError)
    return { title: error.message, detail: "" };
  return { title: "Something went wrong in the page.", detail: error instanceof Error ? error.message : String(error) };
}
