// One-tap prompts for the jobs people bring most often. The grounding prompt asks for
// the JSON form that the page draws over the image; the JSON prompt asks the server for
// a JSON object (response_format), which the page shows as a JSON code block.
import type { ResponseFormat } from "./conversation";

export interface QuickPrompt {
  label: string;
  text: string;
  responseFormat?: ResponseFormat;
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
