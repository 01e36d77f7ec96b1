// Answers served by the test in place of the model (Playwright's request routing), for
// what the tiny random-weight model cannot say: grounding boxes, a realistic
// conversation for the README screenshots, a given token count, a thinking model's
// reasoning, an answer cut off at the length limit, and an answer that is still being
// written while the test looks (slowAnswer).
import type { Page, Route } from "playwright-core";

export const CANNED_TIMINGS = {
  queue_ms: 0.3,
  preprocess_ms: 18,
  vision_ms: 2140,
  prefill_ms: 1210,
  decode_ms: 3900,
  ttft_ms: 3390,
  total_ms: 7290,
  prefill_tokens_per_s: 690,
  decode_tokens_per_s: 16.4,
  images: [
    {
      width: 1024,
      height: 768,
      resized_width: 1024,
      resized_height: 768,
      grid_t: 1,
      grid_h: 48,
      grid_w: 64,
      tokens: 768,
      cached: false,
    },
  ],
};

export const BOXES_ANSWER = [
  "```json",
  "[",
  '  {"bbox_2d": [47, 66, 554, 476], "label": "report text"},',
  '  {"bbox_2d": [47, 534, 613, 961], "label": "bar chart"},',
  '  {"bbox_2d": [651, 558, 736, 600], "label": "stop sign"},',
  '  {"bbox_2d": [809, 63, 927, 224], "label": "sun"},',
  '  {"bbox_2d": [631, 689, 947, 921], "label": "road sign"}',
  "]",
  "```",
].join("\n");

export const TABLE_ANSWER = [
  "The bar chart *Sales by quarter (units)*:",
  "",
  "| Quarter | Units |",
  "|---|---:|",
  "| Q1 | 120 |",
  "| Q2 | 185 |",
  "| Q3 | 160 |",
  "| Q4 | 240 |",
  "| Q5 | 210 |",
  "",
  "Q4 is the best quarter, **240 units**.",
].join("\n");

export const CANNED_USAGE = { prompt_tokens: 812, completion_tokens: 64, total_tokens: 876 };

/** A thinking model's answer: `reasoning` streamed as delta.reasoning_content before `text`
 * (vLLM's and llama-server's shape). */
export interface ThoughtAnswer {
  reasoning: string;
  text: string;
}

/** An answer that ends at the length limit (finish_reason "length"). */
export interface CutOffAnswer {
  text: string;
  cutOff: true;
}

export type CannedAnswer = string | ThoughtAnswer | CutOffAnswer;

/** The events of an OpenAI-style stream that says `answer` in small pieces. */
function sseEvents(answer: CannedAnswer, timings: object, usage: object): string[] {
  const text = typeof answer === "string" ? answer : answer.text;
  const reasoning = typeof answer === "object" && "reasoning" in answer ? answer.reasoning : "";
  const finish = typeof answer === "object" && "cutOff" in answer ? "length" : "stop";
  const pieces = (words: string) => words.match(/[\s\S]{1,12}/g) ?? [];
  const chunk = (choices: object[], extra: object = {}) =>
    `data: ${JSON.stringify({ id: "chatcmpl-canned", object: "chat.completion.chunk", created: 0, model: "qvl", choices, ...extra })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    ...pieces(reasoning).map((piece) =>
      chunk([{ index: 0, delta: { reasoning_content: piece }, finish_reason: null }]),
    ),
    ...pieces(text).map((piece) => chunk([{ index: 0, delta: { content: piece }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: finish }]),
    chunk([], { usage, timings }),
    "data: [DONE]\n\n",
  ];
}

export function sseBody(answer: CannedAnswer, timings: object = CANNED_TIMINGS, usage: object = CANNED_USAGE): string {
  return sseEvents(answer, timings, usage).join("");
}

/** What qvl serve reports for the fixture clip (8 frames at 4 fps) with the 2B model. */
export const CANNED_VIDEO_TIMINGS = {
  ...CANNED_TIMINGS,
  vision_ms: 610,
  prefill_ms: 420,
  ttft_ms: 1090,
  images: [],
  videos: [
    {
      width: 320,
      height: 240,
      frames: 8,
      fps: 4,
      sampled_frames: 4,
      resized_width: 320,
      resized_height: 256,
      grid_thw: [2, 16, 20],
      tokens: 160,
      cached: false,
    },
  ],
};

export const VIDEO_ANSWER = [
  "A circle moves across the frame from left to right:",
  "",
  "1. **0–0.5 s**: it starts at the lower left, beside the text box.",
  "2. **0.5–1.5 s**: it rolls right, passing over the bar chart.",
  "3. **1.5–2 s**: it stops at the right edge, covering bar *d*.",
  "",
  "The frame counter in the top right corner counts from **#00** to **#07**.",
].join("\n");

/** Answers the next chat requests with `answers`, in order; later ones reach the server. */
export async function cannedAnswers(
  page: Page,
  answers: CannedAnswer[],
  timings: object = CANNED_TIMINGS,
  usage: object = CANNED_USAGE,
): Promise<void> {
  const queue = [...answers];
  await page.route("**/v1/chat/completions", async (route: Route) => {
    const answer = queue.shift();
    if (answer === undefined) return route.continue();
    await route.fulfill({
      status: 200,
      headers: { "Content-Type": "text/event-stream" },
      body: sseBody(answer, timings, usage),
    });
  });
}

/** A Qwen3-VL Thinking model reading the README's demo image (bench/bench-1024x768.jpg):
 * what it thought, then the text line by line. */
export const THOUGHT_OCR_ANSWER: ThoughtAnswer = {
  reasoning: [
    "The person wants all the text, line by line, in reading order.",
    "",
    "Top left there is a report card: the title **QUARTERLY REPORT 2024**, then seven lines of figures. " +
      "Below it, a bar chart titled *Sales by quarter (units)*; on the right, a STOP sign and a road sign, *Exit 42 - Main St*.",
    "",
    "I'll copy the card line by line, then the chart's title, then the signs, left to right.",
  ].join("\n"),
  text: [
    "QUARTERLY REPORT 2024",
    "Revenue grew 12.4% to $48.2M in Q3.",
    "Operating margin: 18.7% (prev. 16.1%)",
    "Active users: 1,284,530 (+9.8% YoY)",
    "Top regions: EU 41%, NA 33%, APAC 26%",
    "Invoice #A-20931 Due: 2024-11-15",
    "Contact: support@example.com / +1 555 0142",
    "Note: figures are unaudited estimates.",
    "",
    "Sales by quarter (units)",
    "STOP",
    "Exit 42 - Main St",
  ].join("\n"),
};

/** Its token counts: 96 of the 190 are reasoning. */
export const CANNED_THINKING_USAGE = {
  prompt_tokens: 812,
  completion_tokens: 190,
  total_tokens: 1002,
  completion_tokens_details: { reasoning_tokens: 96 },
};

/**
 * Answers the page's next chat request with `text`, one event every `everyMs`. Playwright's
 * routing hands the page a whole body at once, so this answers inside the page, in place
 * of its fetch; the request never reaches the network. Stopping the answer ends it.
 */
export async function slowAnswer(
  page: Page,
  answer: CannedAnswer,
  everyMs: number,
  timings: object = CANNED_TIMINGS,
  usage: object = CANNED_USAGE,
): Promise<void> {
  const events = sseEvents(answer, timings, usage);
  await page.evaluate(
    ({ events, everyMs }) => {
      const realFetch = window.fetch;
      window.fetch = async (input, init) => {
        if (!String(input).endsWith("/v1/chat/completions")) return realFetch(input, init);
        window.fetch = realFetch;
        const encoder = new TextEncoder();
        let timer = 0;
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            let next = 0;
            timer = window.setInterval(() => {
              if (next < events.length) controller.enqueue(encoder.encode(events[next++]));
              else {
                clearInterval(timer);
                controller.close();
              }
            }, everyMs);
            init?.signal?.addEventListener("abort", () => {
              clearInterval(timer);
              controller.error(new DOMException("The answer was stopped.", "AbortError"));
            });
          },
        });
        return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
      };
    },
    { events, everyMs },
  );
}
