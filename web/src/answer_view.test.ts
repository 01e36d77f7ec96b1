// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AssistantMessage } from "./conversation";
import { answerViewFor } from "./ui/answer_view_for_test";
import { type AnswerView, streamingRenderIntervalMs } from "./ui/message_views";

function streaming(text: string): AssistantMessage {
  return { id: "a1", role: "assistant", text, status: "streaming" };
}

function shownText(view: AnswerView): string {
  return view.element.querySelector(".markdown")?.textContent?.trim() ?? "";
}

describe("streamingRenderIntervalMs", () => {
  it("renders short answers every frame and waits longer as the text grows, up to a limit", () => {
    expect(streamingRenderIntervalMs(0)).toBe(0);
    expect(streamingRenderIntervalMs(500)).toBeLessThan(16);
    expect(streamingRenderIntervalMs(10_000)).toBe(200);
    expect(streamingRenderIntervalMs(56_000)).toBeGreaterThan(streamingRenderIntervalMs(10_000));
    expect(streamingRenderIntervalMs(10_000_000)).toBe(2000);
  });
});

describe("AnswerView while the answer streams", () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "requestAnimationFrame", "cancelAnimationFrame", "performance"],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("renders a short answer on the next frame", () => {
    const view = answerViewFor(streaming(""));
    view.update(streaming("Hello"));
    expect(shownText(view)).toBe("");
    vi.advanceTimersByTime(20);
    expect(shownText(view)).toBe("Hello");
  });

  it("renders a long answer less often, and its end at once", () => {
    const long = "word ".repeat(10_000).trim();
    const view = answerViewFor(streaming(long));
    expect(shownText(view)).toBe(long);

    const message = streaming(`${long} more`);
    view.update(message);
    vi.advanceTimersByTime(streamingRenderIntervalMs(long.length) - 50);
    expect(shownText(view)).toBe(long);
    vi.advanceTimersByTime(100);
    expect(shownText(view)).toBe(`${long} more`);

    // More text arrives before the next render is due; then the answer ends.
    message.text += " and the end.";
    view.update(message);
    vi.advanceTimersByTime(20);
    expect(shownText(view)).toBe(`${long} more`);
    message.status = "done";
    view.update(message);
    expect(shownText(view)).toBe(`${long} more and the end.`);
    expect(view.element.getAttribute("aria-busy")).toBe("false");
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("AnswerView of a refused question", () => {
  const refused = (code?: string): AssistantMessage => ({
    id: "a1",
    role: "assistant",
    text: "",
    status: "error",
    error: { title: "Too long.", detail: "the prompt is 17000 tokens", status: 400, ...(code ? { code } : {}) },
  });
  const buttons = (view: AnswerView) =>
    [...view.element.querySelectorAll(".answer-error button")].map((button) => button.textContent);

  it("offers a new conversation when the conversation no longer fits the context", () => {
    const startNew = vi.fn();
    const view = answerViewFor(refused("context_length_exceeded"), { onNewConversation: startNew });
    expect(buttons(view)).toEqual(["New conversation"]);
    view.element.querySelector<HTMLButtonElement>(".answer-error button")!.click();
    expect(startNew).toHaveBeenCalledTimes(1);
  });

  it("offers nothing for another refusal, which asking again would not change", () => {
    expect(buttons(answerViewFor(refused()))).toEqual([]);
    expect(buttons(answerViewFor(refused("invalid_value")))).toEqual([]);
  });
});

describe("AnswerView of an answer cut off at the length limit", () => {
  const cutOff = (): AssistantMessage => ({
    id: "a1",
    role: "assistant",
    text: "First paragraph.\n\nThe second one is",
    status: "done",
    finishReason: "length",
  });
  const meta = (view: AnswerView) => view.element.querySelector(".answer-meta")!;
  const continueButton = (view: AnswerView) =>
    view.element.querySelector<HTMLButtonElement>("button[aria-label='Continue the answer']");

  it("offers Continue beside the flag, and asks for it", () => {
    const onContinue = vi.fn();
    const view = answerViewFor(cutOff(), { onContinue });
    expect(meta(view).querySelector(".answer-flag")?.textContent).toBe("Cut off at the length limit (see Settings)");
    expect(continueButton(view)?.textContent).toBe("Continue");
    continueButton(view)!.click();
    expect(onContinue).toHaveBeenCalledTimes(1);
    // Not for an answer that ended by itself, or one cut before it said anything.
    expect(continueButton(answerViewFor({ ...cutOff(), finishReason: "stop" }))).toBeNull();
    expect(continueButton(answerViewFor({ ...cutOff(), text: "", reasoning: "Hmm" }))).toBeNull();
  });

  it("reads out the continuation from the paragraph it was cut off in", () => {
    const said: string[] = [];
    const message = cutOff();
    const view = answerViewFor(message, { announce: (text) => said.push(text) });
    message.status = "streaming";
    delete message.finishReason;
    view.update(message);
    expect(view.element.getAttribute("aria-busy")).toBe("true");
    expect(continueButton(view)).toBeNull();
    message.text += " longer.\n\nA third.";
    message.status = "done";
    view.update(message);
    expect(said).toEqual(["The second one is longer.", "A third."]);
    expect(meta(view).querySelector(".answer-flag")).toBeNull();
  });

  it("says why a continuation failed until the next one starts", () => {
    const message = cutOff();
    const view = answerViewFor(message);
    const errorBox = view.element.querySelector<HTMLElement>(".answer-error")!;
    view.showContinueError({ title: "The server could not use this request.", detail: "continue_final_message: no" });
    expect(errorBox.hidden).toBe(false);
    expect([...errorBox.children].map((child) => child.textContent)).toEqual([
      "The answer could not be continued.",
      "The server could not use this request.",
      "continue_final_message: no",
    ]);
    // Continue, under it, is the way to ask again.
    expect(continueButton(view)).not.toBeNull();
    message.status = "streaming";
    view.update(message);
    message.status = "done";
    view.update(message);
    expect(errorBox.hidden).toBe(true);
  });
});

describe("AnswerView before the first token", () => {
  const status = (view: AnswerView) => view.element.querySelector<HTMLElement>(".answer-status")!;
  const bar = (view: AnswerView) => status(view).querySelector<HTMLProgressElement>("progress")!;
  const image = { id: "i1", name: "cat.png", width: 4, height: 4 };

  it("says how far the server has come, in words and in a bar a screen reader reads once", () => {
    const view = answerViewFor(streaming(""), { images: [image] });
    expect(status(view).textContent).toBe("Looking at the image…");
    expect(bar(view).hidden).toBe(true);
    const dots = status(view).querySelector(".dots");

    view.setProgress({ total: 782, cache: 0, processed: 0, vision: 0.375 });
    expect(status(view).textContent).toBe("Looking at the image… 37%");
    expect(bar(view).hidden).toBe(false);
    expect(bar(view).value).toBe(37);
    expect(bar(view).max).toBe(100);
    expect(bar(view).getAttribute("aria-label")).toBe("Looking at the image…");
    expect(status(view).querySelector(".answer-status-text")?.getAttribute("aria-hidden")).toBe("true");

    view.setProgress({ total: 782, cache: 0, processed: 512, vision: 1 });
    expect(status(view).textContent).toBe("Reading the prompt… 65%");
    expect(bar(view).getAttribute("aria-label")).toBe("Reading the prompt…");
    // The dots keep pulsing: the same ones, not drawn anew.
    expect(status(view).querySelector(".dots")).toBe(dots);
    expect(status(view).hidden).toBe(false);
  });

  it("gives way to the answer's first text", () => {
    const message = streaming("");
    const view = answerViewFor(message);
    view.setProgress({ total: 100, processed: 50, vision: 1 });
    message.text = "Hello";
    view.update(message);
    message.status = "done";
    view.update(message);
    expect(status(view).hidden).toBe(true);
    expect(shownText(view)).toBe("Hello");
  });

  it("lets the wait for a busy server win, then shows the progress again", () => {
    const view = answerViewFor(streaming(""), { hasVideo: true });
    view.setProgress({ total: 100, processed: 0, vision: 0.5 });
    view.setWaiting("The server is busy: asking again in 5 s…");
    expect(status(view).textContent).toBe("The server is busy: asking again in 5 s…");
    expect(bar(view).hidden).toBe(true);
    expect(status(view).querySelector(".answer-status-text")?.hasAttribute("aria-hidden")).toBe(false);
    view.setWaiting("");
    expect(status(view).textContent).toBe("Watching the video… 50%");
  });

  it("forgets an earlier answer's progress when it is written again", () => {
    const message: AssistantMessage = { id: "a1", role: "assistant", text: "", status: "done" };
    const view = answerViewFor(message);
    view.setProgress({ total: 100, processed: 50, vision: 1 });
    message.status = "streaming";
    view.update(message);
    expect(status(view).textContent).toBe("Thinking…");
  });
});
