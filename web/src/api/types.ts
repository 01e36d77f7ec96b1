// The parts of the OpenAI chat-completions schema (plus qvl's `timings`) that the
// page reads. Every field is optional: the page must cope with servers that omit any.

export interface ImageTiming {
  width?: number;
  height?: number;
  resized_width?: number;
  resized_height?: number;
  grid_t?: number;
  grid_h?: number;
  grid_w?: number;
  tokens?: number;
  cached?: boolean;
}

export interface Timings {
  queue_ms?: number;
  preprocess_ms?: number;
  vision_ms?: number;
  prefill_ms?: number;
  decode_ms?: number;
  ttft_ms?: number;
  total_ms?: number;
  prefill_tokens_per_s?: number;
  decode_tokens_per_s?: number;
  images?: ImageTiming[];
}

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
}

export interface ApiTextPart {
  type: "text";
  text: string;
}

export interface ApiImagePart {
  type: "image_url";
  image_url: { url: string };
}

export interface ApiMessage {
  role: "system" | "user" | "assistant";
  content: string | (ApiTextPart | ApiImagePart)[];
}

export interface ChatRequestBody {
  model?: string;
  messages: ApiMessage[];
  stream: true;
  stream_options: { include_usage: true };
  temperature: number;
  max_tokens: number;
  max_pixels?: number;
  response_format?: { type: "json_object" };
}
