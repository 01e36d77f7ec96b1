import { describe, expect, it } from "vitest";
import {
  newConversation,
  type AssistantMessage,
  type Conversation,
  type Message,
  type UserMessage,
} from "./conversation";
import {
  addMessage,
  chainMessages,
  showVersion,
  upgradeStoredConversation,
  versionPosition,
  visibleBranch,
} from "./conversation_tree";

function question(id: string): UserMessage {
  return { id, role: "user", text: id, images: [] };
}

function answer(id: string): AssistantMessage {
  return { id, role: "assistant", text: id, status: "done" };
}

const ids = (messages: Message[]) => messages.map((m) => m.id);

/** q1 -> a1, then q2 -> a2; a second answer a1b to q1, followed by q3. */
function branched(): Conversation {
  const conversation = newConversation();
  const [q1, a1, q2, a2, a1b, q3] = [
    question("q1"),
    answer("a1"),
    question("q2"),
    answer("a2"),
    answer("a1b"),
    question("q3"),
  ];
  addMessage(conversation, q1, undefined);
  addMessage(conversation, a1, q1);
  addMessage(conversation, q2, a1);
  addMessage(conversation, a2, q2);
  addMessage(conversation, a1b, q1);
  addMessage(conversation, q3, a1b);
  return conversation;
}

describe("the branch shown", () => {
  it("follows the newest version where none was chosen, and the chosen one elsewhere", () => {
    const conversation = branched();
    expect(ids(visibleBranch(conversation))).toEqual(["q1", "a1b", "q3"]);
    conversation.shownChild = {};
    expect(ids(visibleBranch(conversation))).toEqual(["q1", "a1b", "q3"]);
    conversation.shownChild.q1 = "a1";
    expect(ids(visibleBranch(conversation))).toEqual(["q1", "a1", "q2", "a2"]);
    expect(visibleBranch(newConversation())).toEqual([]);
  });

  it("numbers the versions of a message in the order they were written", () => {
    const conversation = branched();
    const [q1, a1, , , a1b] = conversation.messages;
    expect(versionPosition(conversation, q1)).toEqual({ number: 1, count: 1 });
    expect(versionPosition(conversation, a1)).toEqual({ number: 1, count: 2 });
    expect(versionPosition(conversation, a1b)).toEqual({ number: 2, count: 2 });
  });

  it("switches to a sibling with the branch it had, and not past either end", () => {
    const conversation = branched();
    const [, a1, q2, , a1b] = conversation.messages;
    // Deeper down, the a1 branch ends with q2's newest answer.
    addMessage(conversation, question("q2b"), a1);
    expect(showVersion(conversation, q2, 1)?.id).toBe("q2b");
    expect(showVersion(conversation, a1b, -1)).toBe(a1);
    expect(ids(visibleBranch(conversation))).toEqual(["q1", "a1", "q2b"]);
    expect(showVersion(conversation, a1, -1)).toBeUndefined();
    expect(showVersion(conversation, a1, 1)).toBe(a1b);
    expect(showVersion(conversation, a1b, 1)).toBeUndefined();
    expect(ids(visibleBranch(conversation))).toEqual(["q1", "a1b", "q3"]);
  });

  it("starts a new branch from an edited first question", () => {
    const conversation = branched();
    addMessage(conversation, question("q1b"), undefined);
    expect(ids(visibleBranch(conversation))).toEqual(["q1b"]);
    expect(versionPosition(conversation, conversation.messages.at(-1)!)).toEqual({ number: 2, count: 2 });
  });
});

describe("conversations saved before versions", () => {
  it("are read as one branch, every message kept in order", () => {
    const messages = [question("q1"), answer("a1"), question("q2"), answer("a2")];
    const stored = { id: "c", title: "q1", createdAt: 1, updatedAt: 2, messages } as unknown as Conversation;
    const upgraded = upgradeStoredConversation(stored);
    expect(upgraded.shownChild).toEqual({});
    expect(visibleBranch(upgraded)).toEqual(chainMessages(messages));
    expect(upgraded.messages.map((m) => m.parentId)).toEqual([undefined, "q1", "a1", "q2"]);
    expect(upgraded.messages.map((m) => m.text)).toEqual(["q1", "a1", "q2", "a2"]);
    expect(upgraded).toMatchObject({ id: "c", title: "q1", createdAt: 1, updatedAt: 2 });
  });

  it("leave a conversation with versions as it is", () => {
    const conversation = branched();
    expect(upgradeStoredConversation(conversation)).toBe(conversation);
  });
});
