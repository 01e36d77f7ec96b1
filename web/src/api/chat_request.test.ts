import { describe, expect, it } from "vitest";
import { SchemaError } from "../answer_format";
import { imagesBefore, newConversation, type Message, type VideoRef } from "../conversation";
import { addMessage, showVersion, visibleBranch } from "../conversation_tree";
import { DEFAULT_SETTINGS, normalizeSettings } from "../settings";
import { DEFAULT_SERVER_LIMITS } from "./server_limits";
import { buildChatRequest, chatHeaders, videoForParam, type MediaUrls } from "./chat_request";

const lookup: MediaUrls = {
  image: async (id) => `data:image/png;base64,${id}`,
  video: async (video) => `data:${video.type};base64,${video.id}`,
};

function video(id: string, name: string, type = "video/mp4"): VideoRef {
  return { id, name, type, bytes: 1000, stored: true };
}

/** An image with a question, an answer, then two clips in a follow-up and a third later. */
function videoConversation(): Message[] {
  return [
    {
      id: "u1",
      role: "user",
      text: "What is this?",
      images: [{ id: "IMG", name: "a.png", width: 2, height: 2 }],
      videos: [video("V1", "clip.mp4")],
    },
    { id: "a1", role: "assistant", text: "A ball.", status: "done" },
    { id: "u2", role: "user", text: "", images: [], videos: [video("V2", "b.webm", "video/webm")] },
    { id: "a2", role: "assistant", text: "", status: "error", error: { title: "x", detail: "" } },
    { id: "u3", role: "user", text: "And this?", images: [], videos: [video("V3", "c.mkv", "video/x-matroska")] },
  ];
}

function conversation(): Message[] {
  return [
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
  ];
}

describe("buildChatRequest", () => {
  it("sends a thinking model's answers back without their reasoning", async () => {
    const branch: Message[] = [
      { id: "u1", role: "user", text: "Sky?", images: [] },
      { id: "a1", role: "assistant", text: "Blue.", reasoning: "Clear day.", reasoningMs: 900, status: "done" },
      { id: "u2", role: "user", text: "Sure?", images: [] },
      { id: "a2", role: "assistant", text: "", reasoning: "Stopped while", reasoningMs: 400, status: "stopped" },
      { id: "u3", role: "user", text: "Well?", images: [] },
    ];
    const body = await buildChatRequest(branch, "", DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup);
    expect(body.messages).toEqual([
      { role: "user", content: "Sky?" },
      { role: "assistant", content: "Blue." },
      { role: "user", content: "Sure?" },
      { role: "user", content: "Well?" },
    ]);
  });

  it("resends the whole history with images as data URLs before the text", async () => {
    const body = await buildChatRequest(
      conversation(),
      undefined,
      DEFAULT_SETTINGS,
      DEFAULT_SERVER_LIMITS,
      lookup,
      "Qwen3-VL-2B-Instruct",
    );
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
      return_progress: true,
    });
  });

  it("sends max_tokens only when the settings choose a length", async () => {
    const settings = { ...DEFAULT_SETTINGS, maxTokens: 300 };
    expect(
      (await buildChatRequest(conversation(), undefined, settings, DEFAULT_SERVER_LIMITS, lookup)).max_tokens,
    ).toBe(300);
  });

  it("leaves out a question the server refused, with its images, and keeps one that failed otherwise", async () => {
    const history = conversation();
    history.splice(
      3,
      2,
      { id: "a2", role: "assistant", text: "", status: "error", error: { title: "x", detail: "", status: 400 } },
      { id: "u3", role: "user", text: "", images: [{ id: "CCC", name: "c.png", width: 1, height: 1 }] },
      { id: "a3", role: "assistant", text: "", status: "error", error: { title: "x", detail: "", status: 413 } },
      { id: "u4", role: "user", text: "Still there?", images: [] },
    );
    const body = await buildChatRequest(history, undefined, DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup);
    expect(body.messages.slice(1)).toEqual([
      { role: "assistant", content: "Two squares." },
      { role: "user", content: "Still there?" },
    ]);
    expect(imagesBefore(history, history.length).map((image) => image.id)).toEqual(["AAA", "BBB"]);
    // A busy server or a lost connection says nothing about the question: it stays.
    history[3] = {
      id: "a2",
      role: "assistant",
      text: "",
      status: "error",
      error: { title: "x", detail: "", status: 503 },
    };
    const kept = await buildChatRequest(history, undefined, DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup);
    expect(kept.messages.map((m) => m.content)).toContainEqual("Which is larger?");
  });

  it("adds the system prompt and the image budget from the settings", async () => {
    const settings = {
      ...DEFAULT_SETTINGS,
      systemPrompt: "  Answer in French. ",
      detail: "low" as const,
      temperature: 0,
    };
    const body = await buildChatRequest(conversation(), undefined, settings, DEFAULT_SERVER_LIMITS, lookup);
    expect(body.model).toBeUndefined();
    expect(body.messages[0]).toEqual({ role: "system", content: "Answer in French." });
    expect(body.max_pixels).toBe(256 * 32 * 32);
    expect(body.temperature).toBe(0);
  });

  it("sends the sampling settings chosen, and no others, with at most the server's stop strings", async () => {
    const plain = await buildChatRequest(conversation(), undefined, DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup);
    for (const field of ["temperature", "top_p", "top_k", "min_p", "seed", "stop", "repetition_penalty"]) {
      expect(plain).not.toHaveProperty(field);
    }
    const settings = {
      ...DEFAULT_SETTINGS,
      topP: 0.5,
      topK: 0,
      minP: 0.05,
      seed: 42,
      repetitionPenalty: 1.1,
      presencePenalty: -0.5,
      frequencyPenalty: 0.25,
      stop: ["\n\n", "END", "x", "y", "z"],
    };
    const body = await buildChatRequest(
      conversation(),
      undefined,
      settings,
      { ...DEFAULT_SERVER_LIMITS, stopStrings: 3 },
      lookup,
    );
    expect(body).toMatchObject({
      top_p: 0.5,
      top_k: 0,
      min_p: 0.05,
      seed: 42,
      repetition_penalty: 1.1,
      presence_penalty: -0.5,
      frequency_penalty: 0.25,
      stop: ["\n\n", "END", "x"],
    });
    expect(body).not.toHaveProperty("temperature");
  });

  it("keeps the instructions a conversation started with over the settings' later ones", async () => {
    const settings = { ...DEFAULT_SETTINGS, systemPrompt: "Be brief." };
    const body = await buildChatRequest(conversation(), "Answer in French.", settings, DEFAULT_SERVER_LIMITS, lookup);
    expect(body.messages[0]).toEqual({ role: "system", content: "Answer in French." });
    // One started without instructions keeps having none.
    const without = await buildChatRequest(conversation(), "", settings, DEFAULT_SERVER_LIMITS, lookup);
    expect(without.messages[0].role).toBe("user");
    // One saved before conversations kept them follows the settings.
    const older = await buildChatRequest(conversation(), undefined, settings, DEFAULT_SERVER_LIMITS, lookup);
    expect(older.messages[0]).toEqual({ role: "system", content: "Be brief." });
  });

  it("asks for no more image pixels than the server's limits give", async () => {
    const limits = { ...DEFAULT_SERVER_LIMITS, imageDefaultTokens: 512, imageHighDetailTokens: 640 };
    const medium = { ...DEFAULT_SETTINGS, detail: "medium" as const };
    expect((await buildChatRequest(conversation(), undefined, medium, limits, lookup)).max_pixels).toBe(640 * 32 * 32);
  });

  it("asks for a JSON object when the latest question wants one, and only then", async () => {
    const history = conversation();
    const last = history.at(-1);
    if (last?.role !== "user") throw new Error("the fixture ends with a question");
    last.responseFormat = "json_object";
    expect(
      (await buildChatRequest(history, undefined, DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup)).response_format,
    ).toEqual({
      type: "json_object",
    });

    history.push(
      { id: "a3", role: "assistant", text: "{}", status: "done", responseFormat: "json_object" },
      { id: "u4", role: "user", text: "Now in words.", images: [] },
    );
    expect(
      (await buildChatRequest(history, undefined, DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup)).response_format,
    ).toBeUndefined();
  });
});

describe("the answer format in the settings", () => {
  it("asks every question for JSON, or JSON following the schema, over the question's own format", async () => {
    const json = { ...DEFAULT_SETTINGS, answerFormat: "json" as const };
    const body = await buildChatRequest(conversation(), undefined, json, DEFAULT_SERVER_LIMITS, lookup);
    expect(body.response_format).toEqual({ type: "json_object" });
    const schema = { ...DEFAULT_SETTINGS, answerFormat: "json_schema" as const, jsonSchema: '{"type": "object"}' };
    const history = conversation();
    const last = history.at(-1);
    if (last?.role !== "user") throw new Error("the fixture ends with a question");
    last.responseFormat = "json_object";
    expect((await buildChatRequest(history, undefined, schema, DEFAULT_SERVER_LIMITS, lookup)).response_format).toEqual(
      {
        type: "json_schema",
        json_schema: { name: "answer", schema: { type: "object" }, strict: true },
      },
    );
  });

  it("sends nothing when the schema is not JSON", async () => {
    const broken = { ...DEFAULT_SETTINGS, answerFormat: "json_schema" as const, jsonSchema: "{type: object}" };
    await expect(buildChatRequest(conversation(), undefined, broken, DEFAULT_SERVER_LIMITS, lookup)).rejects.toThrow(
      SchemaError,
    );
  });
});

describe("a conversation with versions", () => {
  it("sends only the branch shown, and the one chosen again after switching back", async () => {
    const conversation = newConversation();
    const first: Message = { id: "u1", role: "user", text: "Name a colour.", images: [] };
    const blue: Message = { id: "a1", role: "assistant", text: "Blue.", status: "done" };
    const red: Message = { id: "a1b", role: "assistant", text: "Red.", status: "done" };
    const edited: Message = { id: "u1b", role: "user", text: "Name a fruit.", images: [] };
    addMessage(conversation, first, undefined);
    addMessage(conversation, blue, first);
    addMessage(conversation, red, first);
    addMessage(conversation, { id: "u2", role: "user", text: "Why?", images: [] }, red);
    const texts = async () =>
      (
        await buildChatRequest(visibleBranch(conversation), "", DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup)
      ).messages.map((m) => m.content);
    expect(await texts()).toEqual(["Name a colour.", "Red.", "Why?"]);
    showVersion(conversation, red, -1);
    expect(await texts()).toEqual(["Name a colour.", "Blue."]);
    addMessage(conversation, edited, undefined);
    expect(await texts()).toEqual(["Name a fruit."]);
    showVersion(conversation, edited, -1);
    expect(await texts()).toEqual(["Name a colour.", "Blue."]);
    showVersion(conversation, blue, 1);
    expect(await texts()).toEqual(["Name a colour.", "Red.", "Why?"]);
  });
});

describe("video parts", () => {
  it("sends each video as a video_url data URL after the images, for every turn of the history", async () => {
    const body = await buildChatRequest(
      videoConversation(),
      undefined,
      DEFAULT_SETTINGS,
      DEFAULT_SERVER_LIMITS,
      lookup,
    );
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "data:image/png;base64,IMG" } },
          { type: "video_url", video_url: { url: "data:video/mp4;base64,V1" } },
          { type: "text", text: "What is this?" },
        ],
      },
      { role: "assistant", content: "A ball." },
      { role: "user", content: [{ type: "video_url", video_url: { url: "data:video/webm;base64,V2" } }] },
      {
        role: "user",
        content: [
          { type: "video_url", video_url: { url: "data:video/x-matroska;base64,V3" } },
          { type: "text", text: "And this?" },
        ],
      },
    ]);
  });

  it("reads a saved conversation from before videos (no videos field) as it was", async () => {
    const history = videoConversation();
    for (const message of history) if (message.role === "user") delete message.videos;
    const body = await buildChatRequest(history, undefined, DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS, lookup);
    expect(body.messages[2]).toEqual({ role: "user", content: "" });
    expect(body.messages[3]).toEqual({ role: "user", content: "And this?" });
  });

  it("finds the video a server error points at, system prompt and skipped answers included", async () => {
    const history = videoConversation();
    const settings = { ...DEFAULT_SETTINGS, systemPrompt: "Be brief." };
    const body = await buildChatRequest(history, undefined, settings, DEFAULT_SERVER_LIMITS, lookup);
    expect(videoForParam(body, history, "messages[1].content[1].video_url.url")?.name).toBe("clip.mp4");
    expect(videoForParam(body, history, "messages[3].content[0].video_url.url")?.name).toBe("b.webm");
    expect(videoForParam(body, history, "messages[4].content[0]")?.name).toBe("c.mkv");
    expect(videoForParam(body, history, "messages[1].content[0].image_url.url")).toBeUndefined();
    expect(videoForParam(body, history, "messages[9].content[0]")).toBeUndefined();
    expect(videoForParam(body, history, "max_tokens")).toBeUndefined();
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
