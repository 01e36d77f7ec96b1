// Turns the conversation into an OpenAI chat-completions request. The whole history,
// images included, is sent every time: the server's prefix cache makes that cheap.
import { lastQuestion, type Conversation } from "../conversation";
import { apiHeaders, requestOptions, type Settings } from "../settings";
import type { ApiImagePart, ApiMessage, ApiTextPart, ChatRequestBody } from "./types";

/** Returns the data URL ("data:image/png;base64,...") of a stored image. */
export type ImageUrlLookup = (imageId: string) => Promise<string>;

export async function buildMessages(
  conversation: Conversation,
  systemPrompt: string,
  imageUrl: ImageUrlLookup,
): Promise<ApiMessage[]> {
  const messages: ApiMessage[] = [];
  if (systemPrompt.trim()) messages.push({ role: "system", content: systemPrompt.trim() });
  for (const message of conversation.messages) {
    if (message.role === "assistant") {
      // Failed or empty answers carry nothing the model said.
      if (message.text) messages.push({ role: "assistant", content: message.text });
      continue;
    }
    if (message.images.length === 0) {
      messages.push({ role: "user", content: message.text });
      continue;
    }
    // Images first, then the question: the order Qwen3-VL's examples use.
    const parts: (ApiTextPart | ApiImagePart)[] = [];
    for (const image of message.images) {
      parts.push({ type: "image_url", image_url: { url: await imageUrl(image.id) } });
    }
    if (message.text) parts.push({ type: "text", text: message.text });
    messages.push({ role: "user", content: parts });
  }
  return messages;
}

export async function buildChatRequest(
  conversation: Conversation,
  settings: Settings,
  imageUrl: ImageUrlLookup,
  model?: string,
): Promise<ChatRequestBody> {
  const body: ChatRequestBody = {
    messages: await buildMessages(conversation, settings.systemPrompt, imageUrl),
    stream: true,
    stream_options: { include_usage: true },
    ...requestOptions(settings),
  };
  // Asked of the latest question only: earlier answers may be prose.
  const format = lastQuestion(conversation)?.responseFormat;
  if (format) body.response_format = { type: format };
  return model ? { model, ...body } : body;
}

/** Names the conversation, so that a load balancer can keep it on the server that
 * holds its cached prefix; the server itself ignores it. */
export const SESSION_HEADER = "X-Session-Id";

/** Headers for a chat request: the API key and the conversation's id. */
export function chatHeaders(settings: Settings, conversationId: string): Record<string, string> {
  return { ...apiHeaders(settings), [SESSION_HEADER]: conversationId };
}
