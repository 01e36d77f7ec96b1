import { describe, expect, it } from "vitest";
import type { Message } from "../conversation";
import { DEFAULT_SETTINGS } from "../settings";
import { buildChatRequest, type MediaUrls } from "./chat_request";
import { dataUrlBytes, partBytes, questionBytes, requestBytes, requestSizeProblem } from "./request_size";
import { DEFAULT_SERVER_LIMITS } from "./server_limits";

const MB = 1024 * 1024;

function dataUrl(type: string, bytes: Uint8Array): string {
  return `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;
}

describe("dataUrlBytes", () => {
  it("is the length of the data URL the page sends, padding included", () => {
    for (const size of [0, 1, 2, 3, 4, 5, 1000, 1001]) {
      expect(dataUrlBytes("image/png", size)).toBe(dataUrl("image/png", new Uint8Array(size)).length);
    }
    expect(dataUrlBytes("", 3)).toBe("data:application/octet-stream;base64,AAAA".length);
  });
});

describe("requestBytes", () => {
  it("is the size of the request as sent, without reading or encoding a file", async () => {
    const image = new Uint8Array(1000).fill(7);
    const video = new Uint8Array(2501).fill(9);
    const branch: Message[] = [
      { id: "u1", role: "user", text: "Was ist „das“?", images: [{ id: "I", name: "a.png", width: 40, height: 40 }] },
      { id: "a1", role: "assistant", text: 'A "box".\nDone.', status: "done" },
      {
        id: "u2",
        role: "user",
        text: "And this?",
        images: [],
        videos: [{ id: "V", name: "c.mp4", type: "video/mp4", bytes: video.length, stored: true }],
      },
    ];
    const build = (media: MediaUrls) =>
      buildChatRequest(branch, "Be brief.", DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, media, "qwen");
    const sent = await build({
      image: async () => dataUrl("image/png", image),
      video: async (ref) => dataUrl(ref.type, video),
    });
    const measured = await requestBytes(build, async () => new Blob([image], { type: "image/png" }));
    expect(measured).toBe(new TextEncoder().encode(JSON.stringify(sent)).length);
  });

  it("counts nothing for an image no longer stored", async () => {
    const branch: Message[] = [
      { id: "u1", role: "user", text: "Hi", images: [{ id: "gone", name: "a.png", width: 40, height: 40 }] },
    ];
    const build = (media: MediaUrls) => buildChatRequest(branch, "", DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, media);
    const empty = await build({ image: async () => "", video: async () => "" });
    expect(await requestBytes(build, async () => undefined)).toBe(JSON.stringify(empty).length);
  });
});

describe("what a new question adds", () => {
  it("counts its text as JSON and each file's part around its URL, with room to spare", () => {
    const part = JSON.stringify({ type: "image_url", image_url: { url: "" } }).length + 1;
    expect(partBytes("image/jpeg", 300)).toBeGreaterThanOrEqual(dataUrlBytes("image/jpeg", 300) + part);
    const question = JSON.stringify({ role: "user", content: [{ type: "text", text: 'say "hi"' }] }).length + 1;
    expect(questionBytes('say "hi"')).toBeGreaterThanOrEqual(question);
    expect(questionBytes("é") - questionBytes("e")).toBe(1);
  });
});

describe("requestSizeProblem", () => {
  it("lets a request within the server's limit through", () => {
    expect(requestSizeProblem("a.jpg", "image", { alone: MB, request: MB }, MB)).toBeUndefined();
  });

  it("names a file too large by itself, what it takes as sent, the limit and the flag", () => {
    expect(requestSizeProblem("scan.png", "image", { alone: 1.3 * MB, request: 2 * MB }, MB)).toBe(
      '"scan.png" is too large for this server: sent, it takes 1.3 MB (files grow by a third as text), over the ' +
        "server's limit of 1.0 MB per request. Use a smaller picture; the server's operator can raise the limit with --max-body-mb.",
    );
    expect(requestSizeProblem("a.mp4", "video", { alone: 3 * MB, request: 3 * MB }, 2 * MB)).toContain(
      "Use a shorter or smaller video;",
    );
  });

  it("offers a new conversation when the conversation's other files make it too large", () => {
    expect(requestSizeProblem("b.jpg", "image", { alone: 0.6 * MB, request: 1.2 * MB }, MB)).toBe(
      '"b.jpg" would make the request 1.2 MB, over the server\'s limit of 1.0 MB per request, which carries every ' +
        "image and video of the conversation. Start a new conversation, or use a smaller picture; the server's " +
        "operator can raise the limit with --max-body-mb.",
    );
  });
});
