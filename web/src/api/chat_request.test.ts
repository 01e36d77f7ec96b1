import { describe, expect, it } from "vitest";
import type { Conversation } from "../conversation";
import { DEFAULT_SETTINGS, normalizeSettings } from "../settings";
import { buildChatRequest, chatHeaders } from "./chat_request";

const lookup = async (id: string) => `data:image/png;base64,${id}`;

function conversation(): Conversation {
  return {
    id: "c",
    title: "",
    createdAt: 0,
    updatedAt: 0,
    messages: [
      {
        id: "u1",
        role: "user",
        text: "What is this?",
        images: [
          { id: "AAA", name: "a.png", width: 2, height: 2 },
          { id: "BBB", name: "b.png", width: 2, height: 2 },
        ],
      },
      { id: "a1", role: "assistant", text: "Two squares.", status: "done" },
      { id: "u2", role: "user", text: "Which is larger?", images: [] },
      { id: "a2", role: "assistant", text: "", status: "error", error: { title: "x", detail: "" } },
      { id: "u3", role: "user", text: "", images: [{ id: "CCC", name: "c.png", width: 1, height: 1 }] },
    ],
  };
}

describe("buildChatRequest", () => {
  it("resends the whole history with images as data URLs before the text", async () => {
    const body = await buildChatRequest(conversation(), DEFAULT_SETTINGS, lookup, "Qwen3-VL-2B-Instruct");
    expect(body).toEqual({
      model: "Qwen3-VL-2B-Instruct",
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "data:image/png;base64,AAA" } },
            { type: "image_url", image_url: { url: "data:image/png;base64,BBB" } },
            { type: "text", text: "What is this?" },
          ],
        },
        { role: "assistant", content: "Two squares." },
        { role: "user", content: "Which is larger?" },
        { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,CCC" } }] },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.7,
      max_tokens: 2048,
    });
  });

  it("adds the system prompt and the image budget from the settings", async () => {
    const settings = {
      ...DEFAULT_SETTINGS,
      systemPrompt: "  Answer in French. ",
      detail: "low" as const,
      temperature: 0,
    };
    const body = await buildChatRequest(conversation(), settings, lookup);
    expect(body.model).toBeUndefined();
    expect(body.messages[0]).toEqual({ role: "system", content: "Answer in French." });
    expect(body.max_pixels).toBe(256 * 32 * 32);
    expect(body.temperature).toBe(0);
  });

  it("asks for a JSON object when the latest question wants one, and only then", async () => {
    const history = conversation();
    const last = history.messages.at(-1);
    if (last?.role !== "user") throw new Error("the fixture ends with a question");
    last.responseFormat = "json_object";
    expect((await buildChatRequest(history, DEFAULT_SETTINGS, lookup)).response_format).toEqual({
      type: "json_object",
    });

    history.messages.push(
      { id: "a3", role: "assistant", text: "{}", status: "done", responseFormat: "json_object" },
      { id: "u4", role: "user", text: "Now in words.", images: [] },
    );
    expect((await buildChatRequest(history, DEFAULT_SETTINGS, lookup)).response_format).toBeUndefined();
  });
});

describe("chatHeaders", () => {
  it("names the conversation in X-Session-Id beside the API key", () => {
    expect(chatHeaders(DEFAULT_SETTINGS, "c0ffee")).toEqual({ "X-Session-Id": "c0ffee" });
    expect(chatHeaders(normalizeSettings({ apiKey: "sk-1" }), "c0ffee")).toEqual({
      Authorization: "Bearer sk-1",
      "X-Session-Id": "c0ffee",
    });
  });
});
