import type { ResponseFormatBody } from "../answer_format";

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

export interface VideoTiming {
  width?: number;
  height?: number;
  /** Frames in the clip, and its frame rate. */
  frames?: number;
  fps?: number;
  /** Frames the model saw. */
  sampled_frames?: number;
  resized_width?: number;
  resized_height?: number;
  grid_t?: number;
  grid_h?: number;
  grid_w?: number;
  tokens?: number;
  cached?: boolean;
  decode_ms?: number;
  encode_ms?: number;
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
  /** Speculative decoding (llama-server's names): tokens drafted, and of those kept. */
  draft_n?: number;
  draft_n_accepted?: number;
  images?: ImageTiming[];
  videos?: VideoTiming[];
}

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  /** A thinking model's reasoning tokens, counted in completion_tokens too. */
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** llama-server's report on the work before the first token (asked with return_progress):
 * prompt tokens in all, of those from the prefix cache, and in the KV cache so far
 * (cached ones included); plus qvl's `vision`, the share of the images' encoding done
 * (0 to 1; 1 when there is none to do). */
export interface PromptProgress {
  total?: number;
  cache?: number;
  processed?: number;
  time_ms?: number;
  vision?: number;
}

export interface ApiTextPart {
  type: "text";
  text: string;
}

export interface ApiImagePart {
  type: "image_url";
  image_url: { url: string };
}

export interface ApiVideoPart {
  type: "video_url";
  video_url: { url: string };
}

export type ApiPart = ApiTextPart | ApiImagePart | ApiVideoPart;

export interface ApiMessage {
  role: "system" | "user" | "assistant";
  content: string | ApiPart[];
}

/** The sampling fields a request may set; each one absent takes the server's default. */
export interface SamplingParams {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  repetition_penalty?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
}

export interface ChatRequestBody extends SamplingParams {
  model?: string;
  messages: ApiMessage[];
  stream: true;
  stream_options: { include_usage: true };
  /** llama-server's: while the server works before the first token, chunks with no
   * choices and a prompt_progress say how far it has come; other servers ignore it. */
  return_progress?: true;
  stop?: string[];
  max_tokens?: number;
  /** vLLM's: a thinking model's reasoning runs at most this many tokens, then it
   * answers; a model that does not think ignores it. */
  thinking_token_budget?: number;
  max_pixels?: number;
  response_format?: ResponseFormatBody;
  /** vLLM's: write on from the last message, an answer, instead of starting a new one
   * (with add_generation_prompt false, which vLLM asks for beside it). */
  continue_final_message?: boolean;
  add_generation_prompt?: boolean;
}
