// One-tap prompts for the jobs people bring most often. The grounding prompt asks for
// the JSON form that the page draws over the image; the JSON prompt asks the server for
// a JSON object (response_format), which the page shows as a JSON code block. A video
// has its own set; a prompt with a BLANK is filled in before it is sent.
import type { ResponseFormat } from "./conversation";

export interface QuickPrompt {
  label: string;
  text: string;
  responseFormat?: ResponseFormat;
}

/** Where the person types in a prompt that needs their words ("When does … happen?"). */
export const BLANK = "…";

export function hasBlank(prompt: QuickPrompt): boolean {
  return prompt.text.includes(BLANK);
}

export const QUICK_PROMPTS: QuickPrompt[] = [
  { label: "Describe", text: "Describe this image in detail." },
  {
    label: "Extract text",
    text: "Extract all the text in this image, line by line, in reading order. Output only the text.",
  },
  {
    label: "Table",
    text: "Turn the chart or table in this image into a Markdown table with a header row. Output only the table.",
  },
  { label: "JSON", text: "Extract the fields of this document as JSON.", responseFormat: "json_object" },
  {
    label: "Find objects",
    text: 'Locate every distinct object in this image. Output JSON: [{"bbox_2d": [x1, y1, x2, y2], "label": "name"}].',
  },
  { label: "Answer the question", text: "Read the question shown in this image and answer it, explaining briefly." },
];

// Qwen3-VL sees a `<t seconds>` stamp before each pair of sampled frames, so it can
// answer with times.
export const VIDEO_QUICK_PROMPTS: QuickPrompt[] = [
  { label: "Describe what happens", text: "Describe what happens in this video, in order." },
  {
    label: `When does ${BLANK} happen?`,
    text: `When does ${BLANK} happen in this video? Answer with the time in seconds.`,
  },
  { label: "Summarize", text: "Summarize this video in two or three sentences." },
  { label: "Extract text", text: "Extract all the text shown in this video, in the order it appears." },
];

/** The set to offer: a video's when the newest picture or clip is a video. */
export function quickPromptsFor(latestMedia: "image" | "video" | undefined): QuickPrompt[] {
  return latestMedia === "video" ? VIDEO_QUICK_PROMPTS : QUICK_PROMPTS;
}
