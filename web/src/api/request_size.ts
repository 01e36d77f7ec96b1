// How large a chat request's body is, as the server's `--max-body-mb` counts it: the JSON
// of the whole conversation, its images and videos as base64 data URLs, a third larger
// than the files. The page checks a file against it when it is attached, before any upload.
import type { VideoRef } from "../conversation";
import { formatBytes } from "../videos/formats";
import type { MediaUrls } from "./chat_request";
import type { ChatRequestBody } from "./types";

// A new question's message and each file's part around its URL, with room to spare:
// {"role":"user","content":[...]} and {"type":"image_url","image_url":{"url":"..."}},
const QUESTION_JSON_BYTES = 64;
const PART_JSON_BYTES = 64;

/** The length of "data:TYPE;base64,..." for a file of `bytes` (FileReader's type for none). */
export function dataUrlBytes(type: string, bytes: number): number {
  return `data:${type || "application/octet-stream"};base64,`.length + Math.ceil(bytes / 3) * 4;
}

/** What a file adds to a request: its data URL and the part around it. */
export function partBytes(type: string, bytes: number): number {
  return dataUrlBytes(type, bytes) + PART_JSON_BYTES;
}

/** What a new question of `text` adds to a request, before its files. */
export function questionBytes(text: string): number {
  return new TextEncoder().encode(JSON.stringify(text)).length + QUESTION_JSON_BYTES;
}

/**
 * The bytes of the request `build` makes with the media it is given: built with empty URLs,
 * so that no file is read or encoded, each counted by its size. `image` gives an image's
 * stored Blob (undefined when it is gone: the request would fail before it is sent).
 */
export async function requestBytes(
  build: (media: MediaUrls) => Promise<ChatRequestBody>,
  image: (imageId: string) => Promise<Blob | undefined>,
): Promise<number> {
  let media = 0;
  const body = await build({
    image: async (imageId) => {
      const blob = await image(imageId);
      media += blob ? dataUrlBytes(blob.type, blob.size) : 0;
      return "";
    },
    video: async (video: VideoRef) => {
      media += dataUrlBytes(video.type, video.bytes);
      return "";
    },
  });
  return new TextEncoder().encode(JSON.stringify(body)).length + media;
}

/**
 * Why a file cannot go into the next request, or undefined when it can. `sizes.alone`:
 * the file in a question by itself (when that is over, a new conversation would not
 * help); `sizes.request`: the request with it and the conversation.
 */
export function requestSizeProblem(
  name: string,
  kind: "image" | "video",
  sizes: { alone: number; request: number },
  maxBytes: number,
): string | undefined {
  if (sizes.request <= maxBytes) return undefined;
  const limit = `over the server's limit of ${formatBytes(maxBytes)} per request`;
  const smaller = kind === "image" ? "a smaller picture" : "a shorter or smaller video";
  const raise = "the server's operator can raise the limit with --max-body-mb";
  if (sizes.alone > maxBytes) {
    return `"${name}" is too large for this server: sent, it takes ${formatBytes(sizes.alone)} (files grow by a third as text), ${limit}. Use ${smaller}; ${raise}.`;
  }
  return `"${name}" would make the request ${formatBytes(sizes.request)}, ${limit}, which carries every image and video of the conversation. Start a new conversation, or use ${smaller}; ${raise}.`;
}
