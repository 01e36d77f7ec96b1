import { describe, expect, it } from "vitest";
import { streamChat, type StreamPiece } from "./chat_stream";
import { ChatError } from "./errors";
import type { ChatRequestBody } from "./types";

const body: ChatRequestBody = {
  messages: [{ role: "user", content: "hi" }],
  stream: true,
  stream_options: { include_usage: true },
  temperature: 0.7,
  max_tokens: 8,
};

function sseResponse(pieces: string[]): Response {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
  return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

function chunk(content: string | null, extra: Record<string, unknown> = {}, finish: string | null = null) {
  const choices =
    content === null && finish === null
      ? []
      : [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }];
  return `data: ${JSON.stringify({ object: "chat.completion.chunk", choices, ...extra })}\n\n`;
}

async function collect(fetchImpl: typeof fetch, signal = new AbortController().signal) {
  const pieces: StreamPiece[] = [];
  for await (const piece of streamChat(body, signal, { Authorization: "Bearer key" }, fetchImpl)) pieces.push(piece);
  return pieces;
}

async function failure(fetchImpl: typeof fetch): Promise<ChatError> {
  try {
    await collect(fetchImpl);
  } catch (error) {
    if (error instanceof ChatError) return error;
    throw error;
  }
  throw new Error("expected a ChatError");
}

describe("streamChat", () => {
  it("posts the body and yields text, finish reason, usage and timings", async () => {
    let sent: RequestInit | undefined;
    let url = "";
    const timings = { ttft_ms: 12.5, images: [{ grid_h: 4, grid_w: 6, tokens: 6 }] };
    const pieces = await collect(async (input, init) => {
      url = String(input);
      sent = init;
      return sseResponse([
        chunk("Hel"),
        chunk("lo", {}).slice(0, 20),
        chunk("lo").slice(20),
        chunk(null, {}, "stop"),
        chunk(null, { usage: { prompt_tokens: 30, completion_tokens: 2 }, timings }),
        "data: [DONE]\n\n",
      ]);
    });
    expect(url).toBe("/v1/chat/completions");
    expect(sent?.method).toBe("POST");
    expect(sent?.headers).toEqual({
      "Content-Type": "application/json",
      Accept: "text/event-stream",
      Authorization: "Bearer key",
    });
    expect(JSON.parse(String(sent?.body))).toEqual(body);
    expect(pieces.map((p) => p.text).join("")).toBe("Hello");
    expect(pieces.find((p) => p.finishReason)?.finishReason).toBe("stop");
    expect(pieces.at(-1)?.usage).toEqual({ prompt_tokens: 30, completion_tokens: 2 });
    expect(pieces.at(-1)?.timings).toEqual(timings);
  });

  it("hands on the progress before the first token, as no text", async () => {
    const progress = { total: 782, cache: 0, processed: 256, time_ms: 2810.5, vision: 1 };
    const pieces = await collect(async () =>
      sseResponse([
        chunk(null, { prompt_progress: { total: 782, cache: 0, processed: 0, time_ms: 900, vision: 0.5 } }),
        chunk(null, { prompt_progress: progress }),
        chunk("Hi"),
        chunk(null, {}, "stop"),
        "data: [DONE]\n\n",
      ]),
    );
    expect(pieces.map((p) => p.progress?.vision)).toEqual([0.5, 1, undefined, undefined]);
    expect(pieces[1]).toEqual({ text: "", reasoning: "", progress });
    expect(pieces.map((p) => p.text).join("")).toBe("Hi");
  });

  it("shows the server's message for OpenAI error objects", async () => {
    const error = await failure(async () =>
      Response.json(
        { error: { message: "image 1 is 9000x9000 pixels; the limit is 4096x4096", type: "invalid_request_error" } },
        { status: 413 },
      ),
    );
    expect(error.status).toBe(413);
    expect(error.title).toBe(
      "The images or the message are too large for the server. Try a smaller image, or start a new conversation with fewer images.",
    );
    expect(error.detail).toBe("image 1 is 9000x9000 pixels; the limit is 4096x4096");
    expect(error.param).toBe("");
  });

  it("keeps the field an error names, so that the page can name the file", async () => {
    const message = "the video is 300 MB, over the limit of 256 MB per video";
    const param = "messages[0].content[0].video_url.url";
    const error = await failure(async () => Response.json({ error: { message, param } }, { status: 413 }));
    expect(error.param).toBe(param);
    expect(error.detail).toBe(message);
  });

  it("says a conversation over the context is too long, with the server's numbers and code", async () => {
    const message = "the prompt is 17000 tokens, over the context of 16384 tokens";
    const error = await failure(async () =>
      Response.json(
        { error: { message, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } },
        { status: 400 },
      ),
    );
    expect(error.title).toBe(
      "The conversation is too long for the model: it no longer fits in the server's context. Start a new conversation, or ask something shorter.",
    );
    expect(error.detail).toBe(message);
    expect(error.code).toBe("context_length_exceeded");
    const other = await failure(async () =>
      Response.json({ error: { message: "bad", code: "invalid_value" } }, { status: 400 }),
    );
    expect(other.title).toBe("The server could not use this request.");
    expect(other.code).toBe("invalid_value");
  });

  it("explains a busy server and a non-JSON error body", async () => {
    const busy = await failure(async () => Response.json({ error: { message: "queue full" } }, { status: 503 }));
    expect(busy.title).toMatch(/busy/);
    expect(busy.detail).toBe("queue full");
    const plain = await failure(async () => new Response("Bad Gateway", { status: 502 }));
    expect(plain.title).toBe("The server failed to answer.");
    expect(plain.detail).toBe("Bad Gateway");
  });

  it("reports an unreachable server", async () => {
    const error = await failure(async () => {
      throw new TypeError("Failed to fetch");
    });
    expect(error.title).toBe("Cannot reach the qvl server. Check that it is still running.");
    expect(error.status).toBe(0);
    expect(error.detail).toBe("");
  });

  it("turns an error object inside the stream into an error", async () => {
    const error = await failure(async () =>
      sseResponse([chunk("par"), `data: ${JSON.stringify({ error: { message: "out of memory" } })}\n\n`]),
    );
    expect(error.detail).toBe("out of memory");
  });

  it("notices a stream that ends without finish reason or [DONE]", async () => {
    const error = await failure(async () => sseResponse([chunk("half an ans")]));
    expect(error.title).toMatch(/stopped early/);
  });

  it("ends quietly when the page aborts", async () => {
    const controller = new AbortController();
    const pieces: StreamPiece[] = [];
    const fetchImpl: typeof fetch = async (_input, init) => {
      const stream = new ReadableStream<Uint8Array>({
        start(streamController) {
          streamController.enqueue(new TextEncoder().encode(chunk("first")));
          init?.signal?.addEventListener("abort", () =>
            streamController.error(new DOMException("aborted", "AbortError")),
          );
        },
      });
      return new Response(stream, { status: 200 });
    };
    for await (const piece of streamChat(body, controller.signal, {}, fetchImpl)) {
      pieces.push(piece);
      controller.abort();
    }
    expect(pieces.map((p) => p.text)).toEqual(["first"]);
  });
});
