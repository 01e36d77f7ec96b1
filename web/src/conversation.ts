// The conversation as the page keeps it. Images and videos are referenced by id; their
// bytes live in the browser's Blob stores (IndexedDB) so a conversation record stays small.
import type { Timings, Usage, VideoTiming } from "./api/types";
import type { AnswerPart, StreamedCount } from "./timings";

export interface ImageRef {
  id: string;
  name: string;
  width: number;
  height: number;
}

export interface VideoRef {
  id: string;
  name: string;
  /** The media type it is sent as. */
  type: string;
  bytes: number;
  durationS?: number;
  width?: number;
  height?: number;
  /** The first frame (JPEG), kept in the image store. */
  posterId?: string;
  /** False when the file was too large to keep in the browser: it lasts for the visit. */
  stored: boolean;
  /** What the server made of it in the latest answer (sampled frames, tokens, ...). */
  timing?: VideoTiming;
}

/** What the answer should be (any JSON object, or JSON following the settings' schema);
 * sent as the request's response_format. */
export type ResponseFormat = "json_object" | "json_schema";

export interface UserMessage {
  id: string;
  role: "user";
  /** The message it follows; absent for a first question (see conversation_tree.ts). */
  parentId?: string;
  text: string;
  images: ImageRef[];
  /** Absent in conversations saved before the page took videos. */
  videos?: VideoRef[];
  responseFormat?: ResponseFormat;
}

export function videosOf(message: UserMessage): VideoRef[] {
  return message.videos ?? [];
}

export type AnswerStatus = "streaming" | "done" | "stopped" | "error";

export interface AnswerError {
  title: string;
  detail: string;
  /** The HTTP status of a server's refusal; absent for failures of the network or page. */
  status?: number;
  /** The server's error code (OpenAI's `code`), when it sent one. */
  code?: string;
}

/** Whether the server refused the question as it stands (it is malformed, too large, or
 * asks for what the server cannot give): asking the same again gets the same answer. */
export function isRefusal(error: AnswerError | undefined): boolean {
  return error?.status === 400 || error?.status === 413 || error?.status === 422;
}

/** A question of `branch` whose answer is a refusal: later requests leave it out, so that
 * one bad image or an over-long question does not make every follow-up fail the same way. */
export function wasRefused(branch: Message[], index: number): boolean {
  const next = branch[index + 1];
  return branch[index]?.role === "user" && next?.role === "assistant" && isRefusal(next.error);
}

export interface AssistantMessage {
  id: string;
  role: "assistant";
  /** The question it answers. */
  parentId?: string;
  /** The answer: what is shown, copied and sent back in later requests. */
  text: string;
  /** What a thinking model wrote before the answer (the API's reasoning_content): shown
   * folded above it and exported, never sent back. */
  reasoning?: string;
  /** How long it thought: its first reasoning -> the answer's first text (or the
   * latest reasoning, while it thinks or when stopped before answering). */
  reasoningMs?: number;
  status: AnswerStatus;
  finishReason?: string;
  error?: AnswerError;
  usage?: Usage;
  timings?: Timings;
  /** Measured by the page: request sent -> first text, for servers without timings. */
  clientTtftMs?: number;
  /** Counted by the page as text arrives: all there is for a stopped answer. */
  streamed?: StreamedCount;
  /** The tokens of its parts before its latest continuation (the figures above are that
   * continuation's); absent for an answer never continued, or continued before pages kept it. */
  earlierParts?: AnswerPart[];
  /** Copied from the question: a JSON answer is shown as a JSON code block. */
  responseFormat?: ResponseFormat;
}

export type Message = UserMessage | AssistantMessage;

export interface Conversation {
  id: string;
  /** What the history lists it as: `name`, or the first question's words (titleFor). */
  title: string;
  /** The name the person gave it in the conversations drawer; absent until renamed. */
  name?: string;
  createdAt: number;
  updatedAt: number;
  /** Every version of every message, each after the one it follows (conversation_tree.ts
   * reads the branch shown from them). */
  messages: Message[];
  /** Which version is shown after a message (by its id; "" for the first question): the
   * newest where none was chosen. */
  shownChild: Record<string, string>;
  /** The instructions (system prompt) it was started with: changing the setting later
   * changes new conversations only. Absent until its first request; conversations saved
   * before pages kept it take the setting's at their next. */
  systemPrompt?: string;
}

// crypto.randomUUID exists only in secure contexts, and a phone on the local network
// opens the page over plain http.
export function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function newConversation(now = Date.now()): Conversation {
  return { id: newId(), title: "", createdAt: now, updatedAt: now, messages: [], shownChild: {} };
}

const TITLE_LENGTH = 60;

/** The person's name for the conversation, or else the first question ever asked,
 * whichever version is shown. */
export function titleFor(conversation: Conversation): string {
  if (conversation.name) return conversation.name;
  const first = conversation.messages.find((m): m is UserMessage => m.role === "user");
  if (!first) return "New conversation";
  const text = first.text.replace(/\s+/g, " ").trim();
  if (!text) {
    if (videosOf(first).length > 0) return videosOf(first).length > 1 ? "Videos" : "Video";
    return first.images.length > 1 ? "Images" : "Image";
  }
  return text.length > TITLE_LENGTH ? `${text.slice(0, TITLE_LENGTH - 1)}…` : text;
}

/** Names `conversation` as typed (spaces collapsed); a blank name gives back the title
 * of its first question. */
export function rename(conversation: Conversation, name: string): void {
  const typed = name.replace(/\s+/g, " ").trim();
  if (typed) conversation.name = typed;
  else delete conversation.name;
  conversation.title = titleFor(conversation);
}

/** Whether `query` is in the conversation's title or the text of any of its messages
 * (every version), ignoring case; an empty query matches every conversation. */
export function conversationMatches(conversation: Conversation, query: string): boolean {
  const wanted = query.trim().toLocaleLowerCase();
  if (!wanted) return true;
  const has = (text: string) => text.toLocaleLowerCase().includes(wanted);
  return has(conversation.title) || conversation.messages.some((message) => has(message.text));
}

/** The latest question of `branch`, or undefined in an empty one. */
export function lastQuestion(branch: Message[]): UserMessage | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const message = branch[i];
    if (message.role === "user") return message;
  }
  return undefined;
}

/** The questions of `branch` before `index` that a request carries (refused ones are left out). */
function sentQuestions(branch: Message[], index: number): UserMessage[] {
  return branch.slice(0, index).filter((m, i): m is UserMessage => m.role === "user" && !wasRefused(branch, i));
}

/** Images sent before `index` of `branch`, oldest first: what grounding boxes can refer to. */
export function imagesBefore(branch: Message[], index: number): ImageRef[] {
  return sentQuestions(branch, index).flatMap((m) => m.images);
}

/** Videos sent before `index` of `branch`, in the order of the request (and of `timings.videos`). */
export function videosBefore(branch: Message[], index: number): VideoRef[] {
  return sentQuestions(branch, index).flatMap(videosOf);
}

/** An answer still marked as streaming after a reload was cut off. */
export function settleInterrupted(conversation: Conversation): Conversation {
  return {
    ...conversation,
    messages: conversation.messages.map((m) =>
      m.role === "assistant" && m.status === "streaming" ? { ...m, status: "stopped" } : m,
    ),
  };
}
