// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";
import { newConversation, type Conversation } from "./conversation";
import { addMessage, chainMessages } from "./conversation_tree";
import { conversationJson, conversationMarkdown, downloadConversation, exportFileName } from "./export";

const AT = new Date(2025, 11, 4, 9, 5).getTime();

function sample(): Conversation {
  const conversation = newConversation(AT);
  conversation.title = "What is in *this* picture?";
  conversation.systemPrompt = "Answer in French.";
  conversation.messages.push(
    ...chainMessages([
      {
        id: "u1",
        role: "user",
        text: "What is in *this* picture?",
        images: [
          { id: "i1", name: "photo_1.jpg", width: 320, height: 240 },
          { id: "i2", name: "chart.png", width: 10, height: 10 },
        ],
        videos: [{ id: "v1", name: "clip.mp4", type: "video/mp4", bytes: 80_305, durationS: 2, stored: true }],
      },
      {
        id: "a1",
        role: "assistant",
        text: "A **red** stop sign.",
        status: "done",
        usage: { prompt_tokens: 812, completion_tokens: 8 },
      },
      { id: "u2", role: "user", text: "The fields as JSON.", images: [], responseFormat: "json_object" },
      { id: "a2", role: "assistant", text: '{"sign":"stop"}', status: "stopped", responseFormat: "json_object" },
      { id: "u3", role: "user", text: "And now?", images: [] },
      {
        id: "a3",
        role: "assistant",
        text: "",
        status: "error",
        error: { title: "The server is busy.", detail: "queue full", status: 503 },
      },
    ]),
  );
  return conversation;
}

describe("the conversation as Markdown", () => {
  it("has the questions, the answers and the names of the images and videos", () => {
    expect(conversationMarkdown(sample(), "Qwen/Qwen3-VL-2B-Instruct", AT)).toBe(
      [
        "# What is in \\*this\\* picture?",
        "",
        "*Exported from qvl on 2025-12-04 09:05 · model Qwen/Qwen3-VL-2B-Instruct*",
        "",
        "**Instructions (system prompt):**",
        "",
        "Answer in French.",
        "",
        "---",
        "",
        "## You",
        "",
        "*Images: photo\\_1.jpg, chart.png*",
        "",
        "*Video: clip.mp4 (0:02, 78 KB)*",
        "",
        "What is in *this* picture?",
        "",
        "---",
        "",
        "## Answer",
        "",
        "A **red** stop sign.",
        "",
        "---",
        "",
        "## You",
        "",
        "The fields as JSON.",
        "",
        "---",
        "",
        "## Answer",
        "",
        "```json",
        "{",
        '  "sign": "stop"',
        "}",
        "```",
        "",
        "*Stopped.*",
        "",
        "---",
        "",
        "## You",
        "",
        "And now?",
        "",
        "---",
        "",
        "## Answer",
        "",
        "> **Error:** The server is busy. queue full",
        "",
      ].join("\n"),
    );
  });
});

describe("a thinking model's answer", () => {
  function thought(): Conversation {
    const conversation = newConversation(AT);
    conversation.messages.push(
      ...chainMessages([
        { id: "u1", role: "user", text: "Sky?", images: [] },
        {
          id: "a1",
          role: "assistant",
          text: "It is **blue**.",
          reasoning: "The user asks about the sky.\n\nOn a clear day: blue.\n",
          reasoningMs: 12_300,
          status: "done",
        },
      ]),
    );
    return conversation;
  }

  it("has its reasoning quoted above the answer in Markdown", () => {
    const markdown = conversationMarkdown(thought(), undefined, AT);
    expect(markdown).toContain(
      [
        "## Answer",
        "",
        "> **Thought for 12 s**",
        ">",
        "> The user asks about the sky.",
        ">",
        "> On a clear day: blue.",
        "",
        "It is **blue**.",
        "",
      ].join("\n"),
    );
  });

  it("keeps its reasoning and how long it took in JSON", () => {
    const [, answer] = JSON.parse(conversationJson(thought())).messages;
    expect(answer.reasoning).toBe("The user asks about the sky.\n\nOn a clear day: blue.\n");
    expect(answer.reasoningMs).toBe(12_300);
    expect(answer.text).toBe("It is **blue**.");
  });
});

describe("the conversation as JSON", () => {
  it("is the page's own record, which holds no image bytes", () => {
    const conversation = sample();
    const text = conversationJson(conversation);
    const { shownChild: _versions, ...record } = conversation;
    const messages = conversation.messages.map(({ parentId: _parent, ...message }) => message);
    expect(JSON.parse(text)).toEqual({ ...record, messages });
    expect(text).not.toContain("data:");
  });
});

describe("a conversation with versions", () => {
  it("exports the branch shown only, as one line of messages", () => {
    const conversation = sample();
    const question = conversation.messages[2];
    addMessage(
      conversation,
      { id: "u2b", role: "user", text: "Only the colour.", images: [] },
      conversation.messages[1],
    );
    const markdown = conversationMarkdown(conversation, undefined, AT);
    expect(markdown).toContain("Only the colour.");
    expect(markdown).not.toContain(question.role === "user" ? question.text : "");
    expect(markdown).not.toContain("And now?");
    const record = JSON.parse(conversationJson(conversation));
    expect(record.messages.map((m: { id: string }) => m.id)).toEqual(["u1", "a1", "u2b"]);
    expect(JSON.stringify(record)).not.toMatch(/parentId|shownChild/);
  });
});

// jsdom's Blob has no text().
function blobText(blob: Blob): Promise<string> {
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.readAsText(blob);
  });
}

describe("downloading", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("names the file after the title, in any script", () => {
    expect(exportFileName(sample(), "markdown")).toBe("qvl-what-is-in-this-picture.md");
    const chinese = { ...newConversation(), title: "这是什么？" };
    expect(exportFileName(chinese, "json")).toBe("qvl-这是什么.json");
    expect(exportFileName({ ...newConversation(), title: "?!" }, "json")).toBe("qvl-conversation.json");
    const long = { ...newConversation(), title: `${"word ".repeat(30)}` };
    expect(exportFileName(long, "markdown")).toMatch(/^qvl-(word-)*word\.md$/);
  });

  it("clicks a link to a Blob of the file, and lets the Blob go afterwards", async () => {
    vi.useFakeTimers();
    const blobs: Blob[] = [];
    URL.createObjectURL = vi.fn((blob: Blob) => {
      blobs.push(blob);
      return "blob:qvl/1";
    });
    URL.revokeObjectURL = vi.fn();
    const clicked: HTMLAnchorElement[] = [];
    HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
      clicked.push(this);
    };
    downloadConversation(sample(), "json");
    expect(clicked).toHaveLength(1);
    expect(clicked[0].download).toBe("qvl-what-is-in-this-picture.json");
    expect(clicked[0].href).toBe("blob:qvl/1");
    expect(clicked[0].isConnected).toBe(false);
    expect(blobs[0].type).toBe("application/json");
    expect(URL.revokeObjectURL).not.toHaveBeenCalled();
    vi.runAllTimers();
    expect(URL.revokeObjectURL).toHaveBeenCalledWith("blob:qvl/1");

    downloadConversation(sample(), "markdown", "model");
    expect(blobs[1].type).toBe("text/markdown;charset=utf-8");
    vi.useRealTimers();
    expect(JSON.parse(await blobText(blobs[0])).id).toBeDefined();
    expect(await blobText(blobs[1])).toContain("## You");
  });
});
