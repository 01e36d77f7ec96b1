// A conversation is a tree, as in ChatGPT: editing a question or writing an answer again
// adds a sibling (a new version) in place of replacing it, so nothing said is lost. One
// branch is shown at a time, made of the version chosen after each message; only that
// branch is sent, exported, counted and drawn on.
import type { Conversation, Message } from "./conversation";

// The key in `shownChild` of the first question's versions.
const FIRST = "";

function parentKey(message: Message): string {
  return message.parentId ?? FIRST;
}

function childrenByParent(conversation: Conversation): Map<string, Message[]> {
  const children = new Map<string, Message[]>();
  for (const message of conversation.messages) {
    const key = parentKey(message);
    const versions = children.get(key);
    if (versions) versions.push(message);
    else children.set(key, [message]);
  }
  return children;
}

/** The messages shown, first question first: after each message the version chosen, or
 * the newest one. */
export function visibleBranch(conversation: Conversation): Message[] {
  const children = childrenByParent(conversation);
  const branch: Message[] = [];
  for (let key = FIRST; ;) {
    const versions = children.get(key);
    if (!versions) return branch;
    const shown = versions.find((m) => m.id === conversation.shownChild[key]) ?? versions[versions.length - 1];
    branch.push(shown);
    key = shown.id;
  }
}

/** Every version of `message` (itself included), oldest first. */
export function versionsOf(conversation: Conversation, message: Message): Message[] {
  const key = parentKey(message);
  return conversation.messages.filter((m) => parentKey(m) === key);
}

/** "Version 2 of 3": `number` counts from 1. */
export interface VersionPosition {
  number: number;
  count: number;
}

export function versionPosition(conversation: Conversation, message: Message): VersionPosition {
  const versions = versionsOf(conversation, message);
  return { number: versions.indexOf(message) + 1, count: versions.length };
}

/** Adds `message` after `parent` (none: as a first question) and shows it. */
export function addMessage(conversation: Conversation, message: Message, parent: Message | undefined): void {
  if (parent) message.parentId = parent.id;
  else delete message.parentId;
  conversation.messages.push(message);
  conversation.shownChild[parentKey(message)] = message.id;
}

/** Shows the version `step` away from `message` (-1: the one before), with the branch
 * last shown after it. Returns that version, or undefined past either end. */
export function showVersion(conversation: Conversation, message: Message, step: number): Message | undefined {
  const versions = versionsOf(conversation, message);
  const next = versions[versions.indexOf(message) + step];
  if (next) conversation.shownChild[parentKey(next)] = next.id;
  return next;
}

/** Messages in one line, each following the one before it. */
export function chainMessages(messages: Message[]): Message[] {
  return messages.map((message, i) => {
    const chained = { ...message };
    if (i > 0) chained.parentId = messages[i - 1].id;
    else delete chained.parentId;
    return chained;
  });
}

/** Conversations saved before the page kept versions are one line of messages, without
 * `shownChild`: read as a tree with one branch, every message kept. */
export function upgradeStoredConversation(stored: Conversation): Conversation {
  if (stored.shownChild) return stored;
  return { ...stored, messages: chainMessages(stored.messages), shownChild: {} };
}
