// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AssistantMessage } from "../conversation";
import { answerViewFor } from "./answer_view_for_test";
import type { AnswerView } from "./message_views";

const REASONING = "The user asks about the sky.\n\nOn a clear day it is **blue**.";

function thinking(reasoning: string, reasoningMs = 0): AssistantMessage {
  return { id: "a1", role: "assistant", text: "", reasoning, reasoningMs, status: "streaming" };
}

function block(view: AnswerView): HTMLDetailsElement | null {
  return view.element.querySelector("details.reasoning");
}

function summary(view: AnswerView): string {
  return block(view)?.querySelector("summary")?.textContent ?? "";
}

function reasoningShown(view: AnswerView): string {
  return block(view)?.querySelector(".reasoning-text")?.textContent?.trim() ?? "";
}

function answerShown(view: AnswerView): string {
  return view.element.querySelector(":scope > .markdown")?.textContent?.trim() ?? "";
}

describe("a thinking model's reasoning", () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "requestAnimationFrame", "cancelAnimationFrame", "performance"],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is open above the answer while the model thinks, then folds to how long it thought", async () => {
    const view = answerViewFor(thinking("The user asks"));
    expect(block(view)?.open).toBe(true);
    expect(summary(view)).toBe("Thinking…");
    expect(reasoningShown(view)).toBe("The user asks");
    expect(view.element.querySelector<HTMLElement>(".answer-status")?.hidden).toBe(true);
    expect(view.element.firstElementChild?.nextElementSibling).toBe(block(view));

    view.update(thinking(REASONING, 1200));
    vi.advanceTimersByTime(20);
    expect(reasoningShown(view)).toBe("The user asks about the sky.\nOn a clear day it is blue.");
    expect(block(view)?.querySelector("strong")?.textContent).toBe("blue");
    expect(answerShown(view)).toBe("");

    const answer = { ...thinking(REASONING, 2400), text: "It is blue." };
    view.update(answer);
    vi.advanceTimersByTime(20);
    expect(block(view)?.open).toBe(false);
    expect(summary(view)).toBe("Thought for 2 s");
    expect(answerShown(view)).toBe("It is blue.");

    const writeText = vi.fn(async (_text: string) => {});
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    view.update({ ...answer, status: "done" });
    view.element.querySelector<HTMLButtonElement>('button[aria-label="Copy the answer"]')!.click();
    expect(writeText).toHaveBeenCalledWith("It is blue.");
    expect(summary(view)).toBe("Thought for 2 s");
  });

  it("stays as the person left it when the answer begins", () => {
    const view = answerViewFor(thinking("Hmm"));
    const details = block(view)!;
    details.querySelector("summary")!.click();
    expect(details.open).toBe(false);
    details.querySelector("summary")!.click();
    expect(details.open).toBe(true);
    view.update({ ...thinking("Hmm", 500), text: "Yes." });
    vi.advanceTimersByTime(20);
    expect(details.open).toBe(true);
    expect(summary(view)).toBe("Thought for less than a second");
  });

  it("of an answer shown again is folded, and drawn once opened", () => {
    const view = answerViewFor({ ...thinking(REASONING, 75_000), text: "It is blue.", status: "done" });
    const details = block(view)!;
    expect(details.open).toBe(false);
    expect(summary(view)).toBe("Thought for 1 min 15 s");
    expect(reasoningShown(view)).toBe("");
    details.open = true;
    details.dispatchEvent(new Event("toggle"));
    expect(reasoningShown(view)).toBe("The user asks about the sky.\nOn a clear day it is blue.");
  });

  it("of an answer stopped while thinking stays, folded, with no answer to copy", () => {
    const view = answerViewFor({ ...thinking("First, then", 3000), status: "stopped" });
    expect(block(view)?.open).toBe(false);
    expect(summary(view)).toBe("Thought for 3 s");
    expect(view.element.querySelector('button[aria-label="Copy the answer"]')).toBeNull();
    expect(view.element.querySelector(".answer-regenerate")).not.toBeNull();
  });

  it("is not read out: a screen reader hears that the model thinks, then the answer", () => {
    const said: string[] = [];
    const view = answerViewFor(thinking(""), { announce: (text) => said.push(text) });
    const show = (message: AssistantMessage) => {
      view.update(message);
      vi.advanceTimersByTime(100);
    };
    show(thinking("The user"));
    show(thinking("The user asks.\n\nAbout the sky."));
    show(thinking(REASONING));
    show({ ...thinking(REASONING), text: "It is blue.\n\nOn a clear day." });
    show({ ...thinking(REASONING), text: "It is blue.\n\nOn a clear day.", status: "done" });
    expect(said).toEqual(["Thinking…", "It is blue.", "On a clear day."]);
  });
});

describe("an answer without reasoning", () => {
  it("is drawn as before: no reasoning block, the waiting status until text comes", () => {
    const parts = (view: AnswerView) => [...view.element.children].map((child) => child.className);
    const before = ["answer-status", "markdown", "grounding-slot", "answer-error", "answer-meta"];
    for (const reasoning of [undefined, ""]) {
      const message: AssistantMessage = { id: "a1", role: "assistant", text: "", status: "streaming" };
      if (reasoning !== undefined) message.reasoning = reasoning;
      const view = answerViewFor(message);
      expect(parts(view)).toEqual(before);
      expect(view.element.querySelector<HTMLElement>(".answer-status")?.hidden).toBe(false);
      expect(view.element.querySelector(".answer-status")?.textContent).toBe("Thinking…");
      view.update({ ...message, text: "Done.", status: "done" });
      expect(parts(view)).toEqual(before);
      expect(answerShown(view)).toBe("Done.");
    }
  });
});
