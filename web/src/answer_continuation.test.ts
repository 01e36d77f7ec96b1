import { describe, expect, it } from "vitest";
import { beginContinuation, canContinue, continuationRequest, restoreAnswer } from "./answer_continuation";
import { addPiece } from "./answer_stream";
import { buildChatRequest, type MediaUrls } from "./api/chat_request";
import { pieceFromEvent } from "./api/chat_stream";
import { DEFAULT_SERVER_LIMITS } from "./api/server_limits";
import type { AssistantMessage, Message } from "./conversation";
import { DEFAULT_SETTINGS } from "./settings";
import { answerStats } from "./timings";

const noMedia: MediaUrls = {
  image: async (id) => `data:image/png;base64,${id}`,
  video: async (video) => `data:${video.type};base64,${video.id}`,
};

function cutOff(): AssistantMessage {
  return {
    id: "a1",
    role: "assistant",
    text: "The three primary colours are red,",
    status: "done",
    finishReason: "length",
    usage: { prompt_tokens: 20, completion_tokens: 8 },
    timings: { decode_tokens_per_s: 12 },
    clientTtftMs: 300,
    streamed: { chunks: 8, characters: 34, decodeMs: 700 },
  };
}

/** The stream's pieces of a continuation, one second apart, added to `answer`. */
function stream(answer: AssistantMessage, chunks: object[]): void {
  chunks.forEach((chunk, i) => addPiece(answer, pieceFromEvent(JSON.stringify(chunk)), (i + 1) * 1000));
}

const text = (content: string) => ({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const end = (reason: string) => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });
const figures = {
  choices: [],
  usage: { prompt_tokens: 28, completion_tokens: 4 },
  timings: { decode_tokens_per_s: 15 },
};

describe("canContinue", () => {
  it("offers to continue an answer cut off at the length limit, with text to go on from", () => {
    expect(canContinue(cutOff())).toBe(true);
    expect(canContinue({ ...cutOff(), finishReason: "stop" })).toBe(false);
    expect(canContinue({ ...cutOff(), status: "stopped" })).toBe(false);
    expect(canContinue({ ...cutOff(), status: "streaming" })).toBe(false);
    // Cut while a thinking model reasoned: nothing of the answer to send back.
    expect(canContinue({ ...cutOff(), text: "", reasoning: "First," })).toBe(false);
    expect(canContinue({ ...cutOff(), status: "error", error: { title: "x", detail: "" } })).toBe(false);
  });
});

describe("a continuation's request", () => {
  it("is the conversation up to the answer, the answer last, with continue_final_message", async () => {
    const branch: Message[] = [{ id: "u1", role: "user", text: "Name the primary colours.", images: [] }, cutOff()];
    const body = continuationRequest(
      await buildChatRequest(branch, "Be brief.", DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, noMedia, "qwen"),
    );
    expect(body).toEqual({
      model: "qwen",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Name the primary colours." },
        { role: "assistant", content: "The three primary colours are red," },
      ],
      stream: true,
      stream_options: { include_usage: true },
      return_progress: true,
      add_generation_prompt: false,
      continue_final_message: true,
    });
  });

  it("leaves a JSON answer's response_format out: its grammar cannot start halfway", async () => {
    const branch: Message[] = [
      { id: "u1", role: "user", text: "The fields?", images: [], responseFormat: "json_object" },
      { ...cutOff(), text: '{"vendor": "AC', responseFormat: "json_object" },
    ];
    const asked = await buildChatRequest(branch, "", DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, noMedia);
    expect(asked.response_format).toEqual({ type: "json_object" });
    const body = continuationRequest(asked);
    expect(body).not.toHaveProperty("response_format");
    expect(body.messages.at(-1)).toEqual({ role: "assistant", content: '{"vendor": "AC' });
  });
});

describe("a continued answer", () => {
  it("gets the new text on its end, the continuation's figures, and no flag once it ends", () => {
    const answer = cutOff();
    beginContinuation(answer);
    expect(answer).toEqual({
      id: "a1",
      role: "assistant",
      text: answer.text,
      status: "streaming",
      earlierParts: [{ tokens: 8 }],
    });
    stream(answer, [text(" yellow"), text(" and blue."), end("stop"), figures]);
    answer.status = "done";
    expect(answer.text).toBe("The three primary colours are red, yellow and blue.");
    expect(answer.finishReason).toBe("stop");
    expect(answer.usage).toEqual(figures.usage);
    expect(answer.timings).toEqual(figures.timings);
    // Measured from the continuation's request: its first text came after 1 s.
    expect(answer.clientTtftMs).toBe(1000);
    expect(answer.streamed).toEqual({ chunks: 2, characters: 17, decodeMs: 1000 });
    expect(canContinue(answer)).toBe(false);
  });

  it("is flagged again when the continuation is cut off too", () => {
    // Written on from its last word, where the server's template strips what follows it.
    const answer = { ...cutOff(), text: "The three primary colours are red, \n" };
    beginContinuation(answer);
    stream(answer, [text(" yellow"), end("length"), figures]);
    answer.status = "done";
    expect(answer.text).toBe("The three primary colours are red, yellow");
    expect(answer.finishReason).toBe("length");
    expect(canContinue(answer)).toBe(true);
  });

  it("is as it was after a failed continuation, with any text that came, and can be continued again", () => {
    const answer = cutOff();
    const before = beginContinuation(answer);
    stream(answer, [text(" yel")]);
    restoreAnswer(answer, before);
    expect(answer).toEqual({ ...cutOff(), text: "The three primary colours are red, yel" });
    expect(canContinue(answer)).toBe(true);

    const bare: AssistantMessage = {
      id: "a2",
      role: "assistant",
      text: "Red,",
      status: "done",
      finishReason: "length",
    };
    restoreAnswer(bare, beginContinuation(bare));
    expect(bare).toEqual({ id: "a2", role: "assistant", text: "Red,", status: "done", finishReason: "length" });
  });
});

/** The answer's details, as its view shows them. */
function details(answer: AssistantMessage): Record<string, string> {
  return Object.fromEntries(
    answerStats(answer.timings, answer.usage, answer.clientTtftMs, answer.streamed, answer.earlierParts).details,
  );
}

describe("a continued answer's figures", () => {
  it("count every part's tokens, the speed the latest continuation's, after two continuations in a row", () => {
    const answer = cutOff();
    beginContinuation(answer);
    stream(answer, [text(" yellow"), end("length"), figures]);
    answer.status = "done";
    beginContinuation(answer);
    stream(answer, [
      text(" and blue."),
      end("stop"),
      { choices: [], usage: { prompt_tokens: 33, completion_tokens: 3 }, timings: { decode_ms: 200 } },
    ]);
    answer.status = "done";
    expect(answer.earlierParts).toEqual([{ tokens: 8 }, { tokens: 4 }]);
    expect(details(answer)).toEqual({
      Continued: "twice; the timings below are the latest continuation's",
      "Writing the answer": "200 ms",
      "Time to first token": "1.00 s",
      "Prompt tokens": "33",
      "Answer tokens": "15 (8 + 4 + 3 continued)",
    });
  });

  it("are as they were after a failed continuation, which a later one adds to", () => {
    const answer = cutOff();
    beginContinuation(answer);
    stream(answer, [text(" yellow"), end("length"), figures]);
    answer.status = "done";
    const shown = details(answer);
    expect(shown["Answer tokens"]).toBe("12 (8 + 4 continued)");

    const before = beginContinuation(answer);
    stream(answer, [text(" and")]);
    restoreAnswer(answer, before);
    expect(answer.earlierParts).toEqual([{ tokens: 8 }]);
    expect(details(answer)).toEqual(shown);

    beginContinuation(answer);
    stream(answer, [text(" blue."), end("stop"), figures]);
    expect(details(answer)["Answer tokens"]).toBe("16 (8 + 4 + 4 continued)");
  });

  it("count a continuation stopped before the server's usage as the page counted it", () => {
    const answer = cutOff();
    beginContinuation(answer);
    stream(answer, [text(" yellow"), text(" and")]);
    answer.status = "stopped";
    expect(details(answer)["Answer tokens"]).toBe("about 10 (8 + 2 continued, partly counted by the page)");
  });

  it("of an answer stored before pages kept its parts: counted from what it shows now", () => {
    // Stored as it was: no earlierParts, its figures shown as before.
    const stored = JSON.parse(JSON.stringify(cutOff())) as AssistantMessage;
    expect(details(stored)["Answer tokens"]).toBe("8");
    beginContinuation(stored);
    stream(stored, [text(" yellow."), end("stop"), figures]);
    expect(details(stored)["Answer tokens"]).toBe("12 (8 + 4 continued)");
  });
});
