// Turns the branch of the conversation shown into an OpenAI chat-completions request. The
// whole branch, images and videos included, is sent every time: the server's prefix cache makes that
// cheap (a follow-up about a clip reuses its decoded frames, encoding and KV pages).
import { answerFormatFor, responseFormatBody } from "../answer_format";
import { lastQuestion, videosBefore, videosOf, wasRefused, type Message, type VideoRef } from "../conversation";
import { apiHeaders, requestOptions, type Settings } from "../settings";
import type { ServerLimits } from "./server_limits";
import type { ApiMessage, ApiPart, ChatRequestBody } from "./types";

/** The data URLs ("data:image/png;base64,...", "data:video/mp4;base64,...") of stored media. */
export interface MediaUrls {
  image(imageId: string): Promise<string>;
  video(video: VideoRef): Promise<string>;
}

export async function buildMessages(branch: Message[], systemPrompt: string, media: MediaUrls): Promise<ApiMessage[]> {
  const messages: ApiMessage[] = [];
  if (systemPrompt.trim()) messages.push({ role: "system", content: systemPrompt.trim() });
  for (const [index, message] of branch.entries()) {
    if (wasRefused(branch, index)) continue;
    if (message.role === "assistant") {
      // Failed or empty answers carry nothing the model said. A thinking model's reasoning
      // stays out: Qwen3's chat template drops it from every turn before the latest
      // question anyway, and some APIs (DeepSeek's) refuse reasoning_content in messages.
      if (message.text) messages.push({ role: "assistant", content: message.text });
      continue;
    }
    const videos = videosOf(message);
    if (message.images.length === 0 && videos.length === 0) {
      messages.push({ role: "user", content: message.text });
      continue;
    }
    // Images and videos first, then the question: the order Qwen3-VL's examples use.
    const parts: ApiPart[] = [];
    for (const image of message.images) {
      parts.push({ type: "image_url", image_url: { url: await media.image(image.id) } });
    }
    for (const video of videos) {
      parts.push({ type: "video_url", video_url: { url: await media.video(video) } });
    }
    if (message.text) parts.push({ type: "text", text: message.text });
    messages.push({ role: "user", content: parts });
  }
  return messages;
}

/** `branch`: the messages shown, up to the question to answer; `systemPrompt`: the
 * conversation's own instructions. */
export async function buildChatRequest(
  branch: Message[],
  systemPrompt: string | undefined,
  settings: Settings,
  limits: ServerLimits,
  media: MediaUrls,
  model?: string,
): Promise<ChatRequestBody> {
  const body: ChatRequestBody = {
    // A conversation keeps the instructions it started with; one not yet started (or
    // saved before conversations kept them) gets the settings' own.
    messages: await buildMessages(branch, systemPrompt ?? settings.systemPrompt, media),
    stream: true,
    stream_options: { include_usage: true },
    // Shown in the answer's status line until its first token (ui/prompt_progress.ts).
    return_progress: true,
    ...requestOptions(settings, limits),
  };
  // Asked of the latest question only: earlier answers may be prose.
  const format = answerFormatFor(settings.answerFormat, lastQuestion(branch)?.responseFormat);
  if (format) body.response_format = responseFormatBody(format, settings.jsonSchema);
  return model ? { model, ...body } : body;
}

/** Names the conversation, so that a load balancer can keep it on the server that
 * holds its cached prefix; the server itself ignores it. */
export const SESSION_HEADER = "X-Session-Id";

/** Headers for a chat request: the API key and the conversation's id. */
export function chatHeaders(settings: Settings, conversationId: string): Record<string, string> {
  return { ...apiHeaders(settings), [SESSION_HEADER]: conversationId };
}

/**
 * The video a server error's `param` ("messages[2].content[0].video_url.url") points
 * at, for a message that names the file. Videos appear in the request in conversation
 * order, so the video parts before it say which one it is.
 */
export function videoForParam(body: ChatRequestBody, branch: Message[], param: string): VideoRef | undefined {
  const match = /^messages\[(\d+)\]\.content\[(\d+)\]/.exec(param);
  if (!match) return undefined;
  const [messageIndex, partIndex] = [Number(match[1]), Number(match[2])];
  const content = body.messages[messageIndex]?.content;
  if (!Array.isArray(content) || content[partIndex]?.type !== "video_url") return undefined;
  let before = 0;
  body.messages.forEach((message, i) => {
    if (i > messageIndex || !Array.isArray(message.content)) return;
    const parts = i === messageIndex ? message.content.slice(0, partIndex) : message.content;
    before += parts.filter((part) => part.type === "video_url").length;
  });
  return videosBefore(branch, branch.length)[before];
}
