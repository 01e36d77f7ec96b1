import { describe, expect, it } from "vitest";
import { addPiece } from "./answer_stream";
import { streamChat } from "./api/chat_stream";
import type { ChatRequestBody } from "./api/types";
import type { AssistantMessage } from "./conversation";

const body: ChatRequestBody = {
  messages: [{ role: "user", content: "What colour is the sky?" }],
  stream: true,
  stream_options: { include_usage: true },
};
const usage = { prompt_tokens: 20, completion_tokens: 9 };

function event(delta: Record<string, string> | null, finish: string | null = null, extra: object = {}): string {
  const choices = delta === null ? [] : [{ index: 0, delta, finish_reason: finish }];
  return `data: ${JSON.stringify({ object: "chat.completion.chunk", choices, ...extra })}\n\n`;
}

function ending(finish = "stop"): string[] {
  return [event({}, finish), event(null, null, { usage }), "data: [DONE]\n\n"];
}

/** The events' bytes as the network may hand them over: `size` at a time, cutting
 * events, JSON and UTF-8 characters anywhere. */
function readsOf(events: string[], size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(events.join(""));
  const reads: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) reads.push(bytes.slice(at, at + size));
  return reads;
}

/** The answer the page keeps from a stream whose pieces arrive one second apart. */
async function answerFrom(reads: Uint8Array[]): Promise<AssistantMessage> {
  const fetchImpl: typeof fetch = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const read of reads) controller.enqueue(read);
          controller.close();
        },
      }),
      { status: 200, headers: { "Content-Type": "text/event-stream" } },
    );
  const answer: AssistantMessage = { id: "a1", role: "assistant", text: "", status: "streaming" };
  let seconds = 0;
  for await (const piece of streamChat(body, new AbortController().signal, {}, fetchImpl)) {
    addPiece(answer, piece, ++seconds * 1000);
  }
  answer.status = "done";
  return answer;
}

describe("a thinking model's answer", () => {
  const thoughtThenSaid = [
    event({ role: "assistant", reasoning_content: "The user asks about the sky. " }),
    event({ reasoning_content: "On a clear day it is blue — Rayleigh scattering." }),
    event({ content: "The sky is " }),
    event({ content: "**blue**." }),
    ...ending(),
  ];

  it("keeps the reasoning apart from the answer, however the stream is cut", async () => {
    for (const size of [1, 7, 64, 100_000]) {
      const answer = await answerFrom(readsOf(thoughtThenSaid, size));
      expect(answer.reasoning, `reads of ${size}`).toBe(
        "The user asks about the sky. On a clear day it is blue — Rayleigh scattering.",
      );
      expect(answer.text, `reads of ${size}`).toBe("The sky is **blue**.");
      // First reasoning at 1 s, first answer text at 3 s.
      expect(answer.clientTtftMs).toBe(1000);
      expect(answer.reasoningMs).toBe(2000);
      expect(answer.streamed?.chunks).toBe(4);
      expect(answer.finishReason).toBe("stop");
      expect(answer.usage).toEqual(usage);
    }
  });

  it("reads the field under vLLM's later name, reasoning, too", async () => {
    const answer = await answerFrom(
      readsOf([event({ reasoning: "Hmm." }), event({ content: "Yes." }), ...ending()], 5),
    );
    expect(answer.reasoning).toBe("Hmm.");
    expect(answer.text).toBe("Yes.");
  });

  it("takes reasoning and answer sent in one delta, the reasoning first", async () => {
    const answer = await answerFrom(
      readsOf([event({ reasoning_content: "Short.", content: "Done." }), ...ending()], 9),
    );
    expect(answer.reasoning).toBe("Short.");
    expect(answer.text).toBe("Done.");
    expect(answer.reasoningMs).toBe(0);
  });

  it("keeps reasoning that never reached an answer, and how long it went on", async () => {
    const answer = await answerFrom(
      readsOf(
        [event({ reasoning_content: "First, " }), event({ reasoning_content: "then…" }), ...ending("length")],
        11,
      ),
    );
    expect(answer.text).toBe("");
    expect(answer.reasoning).toBe("First, then…");
    expect(answer.reasoningMs).toBe(1000);
    expect(answer.finishReason).toBe("length");
    expect(answer.streamed?.chunks).toBe(2);
  });

  it("leaves an answer without reasoning as it was", async () => {
    const answer = await answerFrom(
      readsOf(
        [event({ role: "assistant", content: "" }), event({ content: "Hel" }), event({ content: "lo" }), ...ending()],
        13,
      ),
    );
    expect(answer).toEqual({
      id: "a1",
      role: "assistant",
      text: "Hello",
      status: "done",
      clientTtftMs: 2000,
      streamed: { chunks: 2, characters: 5, decodeMs: 1000 },
      finishReason: "stop",
      usage,
    });
  });
});
