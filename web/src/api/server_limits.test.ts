import { describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS, fetchServerLimits, parseServerLimits } from "./server_limits";

const PROPS = {
  default_generation_settings: { n_ctx: 4096, params: { temperature: 0.6, top_k: 0, repeat_penalty: 1.05 } },
  limits: {
    max_body_bytes: 10485760,
    context_tokens: 4096,
    default_max_tokens: 512,
    default_thinking_token_budget: 300,
    max_stop_strings: 2,
    image: {
      max_bytes: 2097152,
      max_decoded_pixels: 4000000,
      max_per_request: 3,
      min_side: 28,
      max_aspect_ratio: 100,
      pixels_per_token: 784,
      default_max_tokens: 1024,
      low_detail_tokens: 200,
      max_tokens: 2048,
    },
    video: { max_bytes: 1048576, max_seconds: 30.5, max_per_request: 1 },
  },
};

function answering(status: number, body: unknown, headers: Record<string, string> = {}): typeof fetch {
  return (async () =>
    new Response(typeof body === "string" ? body : JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json", ...headers },
    })) as typeof fetch;
}

describe("parseServerLimits", () => {
  it("reads every limit of /props", () => {
    expect(parseServerLimits(PROPS)).toEqual({
      bodyBytes: 10485760,
      imageBytes: 2097152,
      imagePixels: 4000000,
      imagesPerRequest: 3,
      imageMinSide: 28,
      imageMaxAspectRatio: 100,
      imagePixelsPerToken: 784,
      imageDefaultTokens: 1024,
      imageLowDetailTokens: 200,
      imageHighDetailTokens: 2048,
      videoBytes: 1048576,
      videoSeconds: 30.5,
      videosPerRequest: 1,
      contextTokens: 4096,
      defaultAnswerTokens: 512,
      defaultThinkingTokens: 300,
      stopStrings: 2,
    });
  });

  it("keeps the default of each limit that is missing or malformed", () => {
    expect(parseServerLimits({})).toEqual(DEFAULT_SERVER_LIMITS);
    expect(parseServerLimits(null)).toEqual(DEFAULT_SERVER_LIMITS);
    expect(
      parseServerLimits({ limits: { context_tokens: "big", image: { max_bytes: -1, max_per_request: 0 }, video: 7 } }),
    ).toEqual({ ...DEFAULT_SERVER_LIMITS, imagesPerRequest: 0 });
    expect(parseServerLimits({ limits: { max_stop_strings: 0 } }).stopStrings).toBe(0);
    expect(parseServerLimits({ limits: { max_stop_strings: 2.5 } }).stopStrings).toBe(4);
    // A server without --thinking-budget says null; an older one says nothing.
    expect(parseServerLimits({ limits: { default_thinking_token_budget: null } }).defaultThinkingTokens).toBeNull();
    expect(parseServerLimits({ limits: { default_thinking_token_budget: 0 } }).defaultThinkingTokens).toBe(0);
    for (const malformed of [-1, 1.5, "300"]) {
      expect(
        parseServerLimits({ limits: { default_thinking_token_budget: malformed } }).defaultThinkingTokens,
      ).toBeNull();
    }
    // Token counts are whole numbers: max_pixels is built from them.
    expect(
      parseServerLimits({ limits: { image: { pixels_per_token: 0, default_max_tokens: 1.5, max_tokens: "8192" } } }),
    ).toEqual(DEFAULT_SERVER_LIMITS);
  });

  it("keeps low detail at most the default and high detail at least it, as the server does", () => {
    // An older qvl names only the default; a raised default lifts the high-detail limit.
    expect(parseServerLimits({ limits: { image: { default_max_tokens: 6000 } } })).toMatchObject({
      imageDefaultTokens: 6000,
      imageLowDetailTokens: 256,
      imageHighDetailTokens: 6000,
    });
    expect(parseServerLimits({ limits: { image: { default_max_tokens: 100 } } })).toMatchObject({
      imageDefaultTokens: 100,
      imageLowDetailTokens: 100,
      imageHighDetailTokens: 4096,
    });
  });
});

describe("fetchServerLimits", () => {
  it("asks /props with the API key and returns its limits", async () => {
    let asked: [unknown, RequestInit | undefined] | undefined;
    const fetcher = (async (input: unknown, init?: RequestInit) => {
      asked = [input, init];
      return answering(200, PROPS)("/props");
    }) as typeof fetch;
    const answer = await fetchServerLimits({ Authorization: "Bearer k" }, fetcher);
    expect(asked).toEqual(["/props", { headers: { Authorization: "Bearer k" } }]);
    expect(answer).toEqual({
      kind: "limits",
      limits: parseServerLimits(PROPS),
      sampling: { temperature: 0.6, topK: 0, repetitionPenalty: 1.05 },
    });
  });

  it("says when to ask again while the model loads", async () => {
    expect(await fetchServerLimits({}, answering(503, {}, { "Retry-After": "2" }))).toEqual({
      kind: "loading",
      retryMs: 2000,
    });
    expect(await fetchServerLimits({}, answering(503, {}))).toEqual({ kind: "loading", retryMs: 5000 });
  });

  it("has nothing from an older server, a proxy, a refused key or no network", async () => {
    expect(await fetchServerLimits({}, answering(404, { error: {} }))).toEqual({ kind: "none" });
    expect(await fetchServerLimits({}, answering(401, { error: {} }))).toEqual({ kind: "none" });
    // A page served in place of the route.
    expect(await fetchServerLimits({}, answering(200, "<html></html>"))).toEqual({ kind: "none" });
    expect(await fetchServerLimits({}, answering(200, { status: "ok" }))).toEqual({ kind: "none" });
    const offline = (async () => {
      throw new TypeError("Failed to fetch");
    }) as typeof fetch;
    expect(await fetchServerLimits({}, offline)).toEqual({ kind: "none" });
  });
});
