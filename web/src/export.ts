// The branch shown of the current conversation as a file to keep or share: Markdown to
// read (questions, answers and their reasoning, the names of its images and videos) or
// JSON, the page's own record (images and videos by name and id: their bytes stay in
// this browser), one line of messages as the page kept them before versions.
import { videosOf, type Conversation, type Message } from "./conversation";
import { visibleBranch } from "./conversation_tree";
import { element } from "./dom";
import { jsonCodeBlock } from "./markdown";
import { thoughtFor } from "./timings";
import { formatBytes, formatClipDuration } from "./videos/formats";

export type ExportFormat = "markdown" | "json";

// File names, image names and titles are the person's text, not Markdown.
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`);
}

function localTime(at: number): string {
  const date = new Date(at);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

function messageMarkdown(message: Message): string[] {
  if (message.role === "user") {
    const lines = ["## You", ""];
    const names = message.images.map((image) => escapeMarkdown(image.name));
    if (names.length > 0) lines.push(`*${names.length === 1 ? "Image" : "Images"}: ${names.join(", ")}*`, "");
    for (const video of videosOf(message)) {
      const facts = [
        video.durationS !== undefined ? formatClipDuration(video.durationS) : "",
        formatBytes(video.bytes),
      ];
      lines.push(`*Video: ${escapeMarkdown(video.name)} (${facts.filter(Boolean).join(", ")})*`, "");
    }
    if (message.text) lines.push(message.text, "");
    return lines;
  }
  const lines = ["## Answer", ""];
  // A thinking model's reasoning, quoted above the answer as the page shows it.
  if (message.reasoning?.trim()) {
    const quoted = message.reasoning
      .trim()
      .split("\n")
      .map((line) => (line ? `> ${line}` : ">"));
    lines.push(`> **${thoughtFor(message.reasoningMs)}**`, ">", ...quoted, "");
  }
  const text = message.responseFormat ? jsonCodeBlock(message.text) : message.text;
  if (text) lines.push(text, "");
  if (message.status === "stopped") lines.push("*Stopped.*", "");
  if (message.finishReason === "length") lines.push("*Cut off at the length limit.*", "");
  if (message.error) {
    const detail = message.error.detail ? ` ${message.error.detail}` : "";
    lines.push(`> **Error:** ${escapeMarkdown(message.error.title)}${escapeMarkdown(detail)}`, "");
  }
  return lines;
}

export function conversationMarkdown(conversation: Conversation, model?: string, exportedAt = Date.now()): string {
  const about = [`Exported from qvl on ${localTime(exportedAt)}`];
  if (model) about.push(`model ${escapeMarkdown(model)}`);
  const lines = [`# ${escapeMarkdown(conversation.title || "Conversation")}`, "", `*${about.join(" · ")}*`, ""];
  if (conversation.systemPrompt) lines.push("**Instructions (system prompt):**", "", conversation.systemPrompt, "");
  for (const message of visibleBranch(conversation)) lines.push("---", "", ...messageMarkdown(message));
  return `${lines.join("\n").trimEnd()}\n`;
}

export function conversationJson(conversation: Conversation): string {
  const { shownChild: _versions, ...record } = conversation;
  const messages = visibleBranch(conversation).map(({ parentId: _parent, ...message }) => message);
  return `${JSON.stringify({ ...record, messages }, null, 2)}\n`;
}

/** "qvl-what-is-in-this-picture.md": the title's words, in any script. */
export function exportFileName(conversation: Conversation, format: ExportFormat): string {
  const words = (conversation.title || "conversation")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return `qvl-${words || "conversation"}.${format === "markdown" ? "md" : "json"}`;
}

// The object URL must outlive the click: some browsers start the download later.
const REVOKE_AFTER_MS = 60_000;

export function downloadConversation(conversation: Conversation, format: ExportFormat, model?: string): void {
  const [text, type] =
    format === "markdown"
      ? [conversationMarkdown(conversation, model), "text/markdown;charset=utf-8"]
      : [conversationJson(conversation), "application/json"];
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = element("a");
  link.href = url;
  link.download = exportFileName(conversation, format);
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), REVOKE_AFTER_MS);
}
