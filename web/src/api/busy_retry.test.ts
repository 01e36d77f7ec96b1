import { describe, expect, it } from "vitest";
import { busyRetryDelayMs, streamChatWhenFree } from "./busy_retry";
import { ChatError } from "./errors";
import type { ChatRequestBody } from "./types";

const body: ChatRequestBody = {
  messages: [{ role: "user", content: "hi" }],
  stream: true,
  stream_options: { include_usage: true },
};

const busy = (status = 503, retryAfter = "1") =>
  Response.json({ error: { message: "the queue is full" } }, { status, headers: { "Retry-After": retryAfter } });

function answer(text: string): Response {
  const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`;
  return new Response(
    event({ choices: [{ index: 0, delta: { content: text }, finish_reason: "stop" }] }) + "data: [DONE]\n\n",
    { status: 200, headers: { "Content-Type": "text/event-stream" } },
  );
}

/** A fetch answering with `responses` in turn, counting its calls; aborted as fetch is. */
function serving(responses: (() => Response)[]): typeof fetch & { calls: number } {
  const fake = Object.assign(
    async (_url: unknown, init?: RequestInit) => {
      if (init?.signal?.aborted) throw new DOMException("The request was stopped.", "AbortError");
      return responses[fake.calls++]();
    },
    { calls: 0 },
  );
  return fake as unknown as typeof fetch & { calls: number };
}

async function textOf(pieces: AsyncGenerator<{ text: string }>): Promise<string> {
  let text = "";
  for await (const piece of pieces) text += piece.text;
  return text;
}

describe("busyRetryDelayMs", () => {
  it("waits as long as a busy server asks, a few times, never over 30 s", () => {
    const error = (status: number, ms: number) => new ChatError("busy", "", status, "", "", ms);
    expect(busyRetryDelayMs(error(503, 5000), 0)).toBe(5000);
    expect(busyRetryDelayMs(error(429, 2000), 2)).toBe(2000);
    expect(busyRetryDelayMs(error(503, 5000), 3)).toBeUndefined();
    expect(busyRetryDelayMs(error(503, 600_000), 0)).toBe(30_000);
  });

  it("does not ask again a server that named no time, or that refused or failed", () => {
    expect(busyRetryDelayMs(new ChatError("busy", "", 503), 0)).toBeUndefined();
    expect(busyRetryDelayMs(new ChatError("bad", "", 400, "", "", 1000), 0)).toBeUndefined();
    expect(busyRetryDelayMs(new ChatError("down", "", 0), 0)).toBeUndefined();
    expect(busyRetryDelayMs(new Error("page"), 0)).toBeUndefined();
  });
});

describe("streamChatWhenFree", () => {
  it("asks a busy server again after its Retry-After, saying how long it waits", async () => {
    const fetcher = serving([() => busy(), () => answer("Hello")]);
    const waits: number[] = [];
    const started = performance.now();
    const text = await textOf(
      streamChatWhenFree(body, new AbortController().signal, {}, (ms) => waits.push(ms), fetcher),
    );
    expect(text).toBe("Hello");
    expect(fetcher.calls).toBe(2);
    expect(waits).toEqual([1000, 0]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it("fails with the server's words once it stays busy, and ends a wait when stopped", async () => {
    const always = serving(Array.from({ length: 5 }, () => () => busy(503, "0.01")));
    const failure = await textOf(streamChatWhenFree(body, new AbortController().signal, {}, () => {}, always)).catch(
      (error: ChatError) => error,
    );
    expect(failure).toBeInstanceOf(ChatError);
    expect((failure as ChatError).detail).toBe("the queue is full");
    expect(always.calls).toBe(4);

    const stop = new AbortController();
    const stopped = serving([() => busy(503, "60"), () => answer("never")]);
    const started = performance.now();
    const text = await textOf(streamChatWhenFree(body, stop.signal, {}, () => stop.abort(), stopped));
    expect(text).toBe("");
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
