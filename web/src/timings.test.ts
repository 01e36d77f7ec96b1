import { describe, expect, it } from "vitest";
import {
  answerPart,
  answerStats,
  countChunk,
  describeImage,
  describeVideo,
  formatDuration,
  normalizeTimings,
  streamedRate,
  videoFacts,
} from "./timings";

describe("answerStats", () => {
  it("summarizes a full qvl timings object", () => {
    const stats = answerStats(
      {
        queue_ms: 0.4,
        preprocess_ms: 12,
        vision_ms: 1234,
        prefill_ms: 800,
        decode_ms: 3000,
        ttft_ms: 2100,
        total_ms: 5100,
        prefill_tokens_per_s: 512.3,
        decode_tokens_per_s: 15.27,
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
      },
      { prompt_tokens: 800, completion_tokens: 46, prompt_tokens_details: { cached_tokens: 20 } },
    );
    expect(stats.summary).toEqual(["image 1.23 s", "first token 2.10 s", "15.3 tok/s", "grid 48×64 (768 tokens)"]);
    expect(stats.details).toEqual([
      ["Waiting in queue", "0 ms"],
      ["Reading images and text", "12 ms"],
      ["Image encoding", "1.23 s"],
      ["Prompt processing", "800 ms (512 tok/s)"],
      ["Writing the answer", "3.00 s (15.3 tok/s)"],
      ["Time to first token", "2.10 s"],
      ["Total", "5.10 s"],
      ["Prompt tokens", "800 (20 reused)"],
      ["Answer tokens", "46"],
      ["Image 1", "1024×768, grid 48×64, 768 tokens"],
    ]);
  });

  it("copes with missing timings, partial fields and several cached images", () => {
    expect(answerStats(undefined, undefined, 850)).toEqual({
      summary: ["first token 850 ms"],
      details: [["Time to first token", "850 ms"]],
    });
    expect(answerStats({}, {})).toEqual({ summary: [], details: [] });
    const stats = answerStats({
      vision_ms: 0,
      images: [
        { tokens: 64, cached: true },
        { cached: true, tokens: 16 },
      ],
    });
    expect(stats.summary).toEqual(["image cached", "2 images (80 tokens)"]);
    expect(stats.details).toEqual([
      ["Image encoding", "0 ms"],
      ["Image 1", "64 tokens, cached"],
      ["Image 2", "16 tokens, cached"],
    ]);
  });

  it("leaves out the vision stage of a text-only answer and names what was read", () => {
    const stats = answerStats(
      normalizeTimings({ queue_ms: 0.2, preprocess_ms: 3, vision_encode_ms: 0, prefill_ms: 40, images: [] }),
    );
    expect(stats.details).toEqual([
      ["Waiting in queue", "0 ms"],
      ["Reading the text", "3 ms"],
      ["Prompt processing", "40 ms"],
    ]);
    // Another server's vision time without a list of images still counts.
    expect(answerStats({ preprocess_ms: 5, vision_ms: 300 }).details).toEqual([
      ["Reading images and text", "5 ms"],
      ["Image encoding", "300 ms"],
    ]);
  });

  it("says how many drafted tokens speculative decoding kept", () => {
    const stats = answerStats({ decode_ms: 2000, draft_n: 52, draft_n_accepted: 22 }, { completion_tokens: 40 });
    expect(stats.details).toEqual([
      ["Writing the answer", "2.00 s"],
      ["Answer tokens", "40"],
      ["Guessed ahead", "22 of 52 drafted tokens kept"],
    ]);
    expect(answerStats({ draft_n: 0, draft_n_accepted: 0 }).details).toEqual([]);
  });

  it("ignores values of the wrong type", () => {
    const stats = answerStats({ ttft_ms: "fast" as unknown as number, images: "none" as unknown as [] });
    expect(stats).toEqual({ summary: [], details: [] });
  });
});

describe("formatting", () => {
  it("formats durations from milliseconds to minutes", () => {
    expect(formatDuration(999.4)).toBe("999 ms");
    expect(formatDuration(12_345)).toBe("12.3 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
  });

  it("shows a resize only when the size changed", () => {
    expect(
      describeImage({
        width: 4000,
        height: 3000,
        resized_width: 1184,
        resized_height: 896,
        grid_t: 1,
        grid_h: 56,
        grid_w: 74,
        tokens: 1036,
      }),
    ).toBe("4000×3000 → 1184×896, grid 56×74, 1036 tokens");
  });
});

describe("normalizeTimings", () => {
  it("reads vision_encode_ms and grid_thw as vision_ms and grid_t/h/w", () => {
    expect(
      normalizeTimings({
        vision_encode_ms: 40,
        ttft_ms: 90,
        images: [{ width: 64, height: 48, grid_thw: [1, 4, 6], tokens: 6, cached: false }, null, "x"],
      }),
    ).toEqual({
      vision_ms: 40,
      vision_encode_ms: 40,
      ttft_ms: 90,
      images: [{ width: 64, height: 48, grid_t: 1, grid_h: 4, grid_w: 6, tokens: 6, cached: false }],
    });
  });

  it("keeps the documented names when both are present and drops a malformed image list", () => {
    expect(normalizeTimings({ vision_ms: 5, vision_encode_ms: 7, images: { a: 1 } })).toEqual({
      vision_ms: 5,
      vision_encode_ms: 7,
    });
  });
});

describe("video timings", () => {
  // What qvl serve sends for tests/data/tiny-qwen3vl/cases/07_video_frames/frames/clip.mp4.
  const CLIP = {
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
  };

  it("reads timings.videos with grid_thw, next to images", () => {
    const timings = normalizeTimings({ vision_ms: 50, images: [], videos: [CLIP, null, 3] });
    expect(timings.videos).toEqual([
      {
        width: 320,
        height: 240,
        frames: 8,
        fps: 4,
        sampled_frames: 4,
        resized_width: 320,
        resized_height: 256,
        grid_t: 2,
        grid_h: 16,
        grid_w: 20,
        tokens: 160,
        cached: false,
      },
    ]);
    expect(normalizeTimings({ videos: "none" })).toEqual({});
  });

  it("shows the sampled frames and tokens in the summary and each video in the details", () => {
    const timings = normalizeTimings({ vision_ms: 1500, ttft_ms: 2000, videos: [CLIP] });
    const stats = answerStats(timings, { prompt_tokens: 190 });
    expect(stats.summary).toEqual(["video 1.50 s", "first token 2.00 s", "4 video frames (160 tokens)"]);
    expect(stats.details).toContainEqual(["Video encoding", "1.50 s"]);
    expect(stats.details).toContainEqual([
      "Video 1",
      "4 of 8 frames at 4 fps sampled, 320×240 → 320×256, grid 2×16×20, 160 tokens",
    ]);
  });

  it("shows decode and encode times when the server sends them, and a cached clip", () => {
    expect(
      describeVideo({ ...normalizeTimings({ videos: [CLIP] }).videos![0], decode_ms: 12.4, encode_ms: 1530 }),
    ).toBe(
      "4 of 8 frames at 4 fps sampled, 320×240 → 320×256, grid 2×16×20, 160 tokens, decoded in 12 ms, encoded in 1.53 s",
    );
    expect(describeVideo({ frames: 1, fps: 29.97, tokens: 4, cached: true })).toBe("1 frame, 4 tokens, cached");
    expect(describeVideo({ sampled_frames: 2, fps: 29.97 })).toBe("2 frames at 29.97 fps sampled");
    const cached = answerStats({ vision_ms: 0, videos: [{ ...CLIP, cached: true }] });
    expect(cached.summary[0]).toBe("video cached");
  });

  it("counts several videos and names mixed media", () => {
    const stats = answerStats({
      vision_ms: 300,
      images: [{ grid_h: 2, grid_w: 2, tokens: 1 }],
      videos: [
        { sampled_frames: 4, tokens: 160 },
        { sampled_frames: 6, tokens: 90 },
      ],
    });
    expect(stats.summary).toEqual([
      "images and video 300 ms",
      "grid 2×2 (1 tokens)",
      "2 videos, 10 frames (250 tokens)",
    ]);
    expect(stats.details.map(([label]) => label)).toEqual([
      "Images and video encoding",
      "Image 1",
      "Video 1",
      "Video 2",
    ]);
  });

  it("says what a video's chip shows once answered", () => {
    expect(videoFacts({ sampled_frames: 4, tokens: 160 })).toBe("4 frames sampled, 160 tokens");
    expect(videoFacts({ sampled_frames: 1 })).toBe("1 frame sampled");
    expect(videoFacts({})).toBe("");
  });
});

describe("the page's own count of a stopped answer", () => {
  it("counts chunks, characters and the time from the first to the latest chunk", () => {
    let count = countChunk(undefined, "Hel", 0);
    count = countChunk(count, "lo, ", 200);
    count = countChunk(count, "world", 400);
    expect(count).toEqual({ chunks: 3, characters: 12, decodeMs: 400 });
    expect(streamedRate(count)).toBe(5);
    expect(streamedRate(countChunk(undefined, "x", 0))).toBeUndefined();
  });

  it("shows tokens, speed and first token when the server sent no usage", () => {
    const stats = answerStats(undefined, undefined, 640, { chunks: 41, characters: 180, decodeMs: 2000 });
    expect(stats.summary).toEqual(["first token 640 ms", "about 41 tokens", "20.0 tok/s"]);
    expect(stats.details).toEqual([
      ["Writing the answer", "2.00 s (20.0 tok/s)"],
      ["Time to first token", "640 ms"],
      ["Answer tokens", "about 41 (180 characters, counted by the page)"],
    ]);
  });

  it("says one token, not one tokens, for an answer stopped after its first", () => {
    const stats = answerStats(undefined, undefined, 90, { chunks: 1, characters: 5, decodeMs: 0 });
    expect(stats.summary).toEqual(["first token 90 ms", "about 1 token"]);
  });

  it("says how many of a thinking model's tokens were reasoning", () => {
    const thought = { completion_tokens: 90, completion_tokens_details: { reasoning_tokens: 64 } };
    expect(answerStats({}, thought).details).toContainEqual(["Answer tokens", "90 (64 thinking)"]);
    const none = { completion_tokens: 12, completion_tokens_details: { reasoning_tokens: 0 } };
    expect(answerStats({}, none).details).toContainEqual(["Answer tokens", "12"]);
  });

  it("prefers the server's figures when it sent them", () => {
    const stats = answerStats({ decode_ms: 1000, decode_tokens_per_s: 30 }, { completion_tokens: 31 }, 500, {
      chunks: 29,
      characters: 100,
      decodeMs: 990,
    });
    expect(stats.summary).toEqual(["first token 500 ms", "30.0 tok/s"]);
    expect(stats.details).toContainEqual(["Answer tokens", "31"]);
    expect(stats.details).toContainEqual(["Writing the answer", "1.00 s (30.0 tok/s)"]);
  });
});

describe("a continued answer's figures", () => {
  const first = { tokens: 64 };

  it("sum the answer tokens of every part and label the latest continuation's speed", () => {
    const stats = answerStats(
      {
        prefill_ms: 90,
        decode_ms: 2000,
        decode_tokens_per_s: 20,
        ttft_ms: 120,
        total_ms: 2110,
        draft_n: 10,
        draft_n_accepted: 4,
      },
      { prompt_tokens: 130, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 126 } },
      undefined,
      undefined,
      [first],
    );
    expect(stats.summary).toEqual(["first token 120 ms", "20.0 tok/s"]);
    expect(stats.details).toEqual([
      ["Continued", "once; the timings below are the continuation's"],
      ["Prompt processing", "90 ms"],
      ["Writing the answer", "2.00 s (20.0 tok/s)"],
      ["Time to first token", "120 ms"],
      ["Total", "2.11 s"],
      ["Prompt tokens", "130 (126 reused)"],
      ["Answer tokens", "104 (64 + 40 continued)"],
      ["Guessed ahead", "4 of 10 drafted tokens kept"],
    ]);
  });

  it("name each part of an answer continued twice, and sum a thinking model's reasoning", () => {
    const stats = answerStats({}, { completion_tokens: 46 }, undefined, undefined, [
      { tokens: 64, thinking: 30 },
      { tokens: 40 },
    ]);
    // Without timings, nothing to say which request they are from.
    expect(stats.details).toEqual([["Answer tokens", "150 (64 + 40 + 46 continued, 30 thinking)"]]);
    expect(
      answerStats({ decode_ms: 900 }, { completion_tokens: 46 }, undefined, undefined, [first, first]).details,
    ).toEqual([
      ["Continued", "twice; the timings below are the latest continuation's"],
      ["Writing the answer", "900 ms"],
      ["Answer tokens", "174 (64 + 64 + 46 continued)"],
    ]);
    const thrice = answerStats({ ttft_ms: 80 }, {}, undefined, undefined, [first, first, first]);
    expect(thrice.details[0]).toEqual(["Continued", "3 times; the timings below are the latest continuation's"]);
  });

  it("say which parts the page counted, without the server's usage", () => {
    const stopped = { chunks: 12, characters: 50, decodeMs: 1100 };
    const partly = answerStats(undefined, undefined, 300, stopped, [first]);
    expect(partly.summary).toEqual(["first token 300 ms", "about 76 tokens", "10.0 tok/s"]);
    expect(partly.details).toEqual([
      ["Continued", "once; the timings below are the continuation's"],
      ["Writing the answer", "1.10 s (10.0 tok/s)"],
      ["Time to first token", "300 ms"],
      ["Answer tokens", "about 76 (64 + 12 continued, partly counted by the page)"],
    ]);
    const all = answerStats(undefined, undefined, 300, stopped, [{ tokens: 64, counted: true }]);
    expect(all.details).toContainEqual(["Answer tokens", "about 76 (64 + 12 continued, counted by the page)"]);
  });

  it("show the latest continuation's tokens, labelled, when an earlier part was not counted", () => {
    const stats = answerStats({}, { completion_tokens: 40 }, undefined, undefined, [{}]);
    expect(stats.details).toEqual([["Answer tokens (latest continuation)", "40"]]);
  });

  it("are an answer never continued's as before: no earlier parts", () => {
    expect(answerStats({ decode_ms: 1000 }, { completion_tokens: 64 }, undefined, undefined, [])).toEqual(
      answerStats({ decode_ms: 1000 }, { completion_tokens: 64 }),
    );
    expect(answerStats({}, { completion_tokens: 64 }).details).toEqual([["Answer tokens", "64"]]);
  });

  it("keep each part's tokens as the server counted them, or else the page", () => {
    const thought = { completion_tokens: 90, completion_tokens_details: { reasoning_tokens: 64 } };
    expect(answerPart(thought, { chunks: 80, characters: 300, decodeMs: 1 })).toEqual({ tokens: 90, thinking: 64 });
    expect(answerPart({ completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 0 } })).toEqual({
      tokens: 5,
    });
    expect(answerPart(undefined, { chunks: 7, characters: 30, decodeMs: 1 })).toEqual({ tokens: 7, counted: true });
    expect(answerPart({}, { chunks: 0, characters: 0, decodeMs: 0 })).toEqual({});
  });
});
