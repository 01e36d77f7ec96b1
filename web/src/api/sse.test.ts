import { describe, expect, it } from "vitest";
import { SseParser } from "./sse";

function parseAll(pieces: string[]) {
  const parser = new SseParser();
  const events = pieces.flatMap((piece) => parser.push(piece));
  return [...events, ...parser.finish()];
}

describe("SseParser", () => {
  it("splits events at blank lines", () => {
    expect(parseAll(['data: {"a":1}\n\ndata: [DONE]\n\n'])).toEqual([
      { event: "message", data: '{"a":1}' },
      { event: "message", data: "[DONE]" },
    ]);
  });

  it("joins an event cut into arbitrary pieces", () => {
    const text = 'data: {"choices":[{"delta":{"content":"héllo"}}]}\r\n\r\ndata: [DONE]\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual([
        { event: "message", data: '{"choices":[{"delta":{"content":"héllo"}}]}' },
        { event: "message", data: "[DONE]" },
      ]);
    }
  });

  it("joins multi-line data with newlines and keeps event names", () => {
    expect(parseAll(["event: error\ndata: line 1\ndata:line 2\n\n"])).toEqual([
      { event: "error", data: "line 1\nline 2" },
    ]);
  });

  it("ignores comments, unknown fields and events without data", () => {
    expect(parseAll([": keep-alive\n\nid: 7\nretry: 10\n\nevent: x\n\ndata: ok\n\n"])).toEqual([
      { event: "message", data: "ok" },
    ]);
  });

  it("keeps a final event that misses its blank line", () => {
    expect(parseAll(["data: last"])).toEqual([{ event: "message", data: "last" }]);
  });

  it("accepts bare carriage returns as line ends", () => {
    expect(parseAll(["data: a\r\rdata: b\r\r"])).toEqual([
      { event: "message", data: "a" },
      { event: "message", data: "b" },
    ]);
  });
});
