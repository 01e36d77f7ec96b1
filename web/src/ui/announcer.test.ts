// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AssistantMessage } from "../conversation";
import { announce } from "./announcer";
import { answerViewFor } from "./answer_view_for_test";
import type { AnswerView } from "./message_views";

function answerView(message: AssistantMessage, said: string[]): AnswerView {
  return answerViewFor(message, { announce: (text) => said.push(text) });
}

describe("an answer read out to a screen reader", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("says each block once the next has begun, the rest at the end, and each block once", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "requestAnimationFrame", "performance"] });
    const said: string[] = [];
    const message: AssistantMessage = { id: "a1", role: "assistant", text: "", status: "streaming" };
    const view = answerView(message, said);
    const show = (text: string, status: AssistantMessage["status"] = "streaming") => {
      view.update({ ...message, text, status });
      vi.advanceTimersByTime(100); // the next streaming render is due
    };
    show("The first");
    show("The first paragraph.");
    expect(said).toEqual([]);
    show("The first paragraph.\n\n- one");
    show("The first paragraph.\n\n- one\n- two");
    expect(said).toEqual(["The first paragraph."]);
    show("The first paragraph.\n\n- one\n- two\n\nThe **end**.", "done");
    expect(said.map((text) => text.replace(/\s+/g, " ").trim())).toEqual([
      "The first paragraph.",
      "one two",
      "The end.",
    ]);
  });

  it("says nothing of an answer shown again from storage", () => {
    const said: string[] = [];
    answerView({ id: "a1", role: "assistant", text: "Kept.\n\nAnswer.", status: "done" }, said);
    expect(said).toEqual([]);
  });

  it("goes through one polite log, which keeps only its latest lines", () => {
    document.body.innerHTML = '<div id="announcer" role="log" aria-live="polite"></div>';
    for (let i = 1; i <= 25; i++) announce(`  line\n${i} `);
    announce(" ");
    const lines = [...document.querySelectorAll("#announcer p")].map((p) => p.textContent);
    expect(lines).toHaveLength(20);
    expect(lines.at(-1)).toBe("line 25");
  });
});
