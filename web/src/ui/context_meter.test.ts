// @vitest-environment jsdom
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { AssistantMessage, Message } from "../conversation";
import { ContextMeter, contextTokensUsed } from "./context_meter";

const PAGE = readFileSync(resolve(__dirname, "../../index.html"), "utf8");

function answer(usage?: AssistantMessage["usage"]): AssistantMessage {
  return { id: String(Math.random()), role: "assistant", text: "x", status: usage ? "done" : "stopped", usage };
}

function withAnswers(...answers: AssistantMessage[]): Message[] {
  return answers.flatMap((a): Message[] => [{ id: "q", role: "user", text: "q", images: [] }, a]);
}

describe("contextTokensUsed", () => {
  it("counts the prompt and answer of the latest answer the server counted", () => {
    expect(contextTokensUsed([])).toBeUndefined();
    expect(contextTokensUsed(withAnswers(answer({ prompt_tokens: 800, completion_tokens: 64 })))).toBe(864);
    const later = withAnswers(
      answer({ prompt_tokens: 800, completion_tokens: 64 }),
      answer({ prompt_tokens: 900, completion_tokens: 100 }),
      answer(),
    );
    expect(contextTokensUsed(later)).toBe(1000);
    expect(contextTokensUsed(withAnswers(answer({ prompt_tokens: 5 })))).toBeUndefined();
  });
});

describe("the context meter", () => {
  beforeEach(() => {
    document.documentElement.innerHTML = new DOMParser().parseFromString(PAGE, "text/html").documentElement.innerHTML;
  });

  const meter = () => document.getElementById("context-meter")!;
  const warning = () => document.getElementById("context-warning")!;

  it("is hidden until an answer was counted, then shows its tokens of the context", () => {
    const shown = new ContextMeter(() => {});
    shown.show(undefined, 16384);
    expect(meter().hidden).toBe(true);
    shown.show(1234, 16384);
    expect(meter().hidden).toBe(false);
    expect(meter().textContent?.replace(/\s+/g, " ").trim()).toBe("Context used: 1,234 of 16,384 tokens");
    expect(document.getElementById("context-fill")!.style.width).toMatch(/^7\.5\d*%$/);
    expect(meter().classList.contains("is-warning")).toBe(false);
    expect(warning().textContent).toBe("");
  });

  it("warns past 85% and offers a new conversation", () => {
    const startNew = vi.fn();
    const shown = new ContextMeter(startNew);
    shown.show(13_900, 16384);
    expect(warning().textContent).toBe("");
    shown.show(14_000, 16384);
    expect(meter().classList.contains("is-warning")).toBe(true);
    expect(warning().getAttribute("role")).toBe("status");
    expect(warning().textContent).toContain("The conversation fills 85% of the server's context");
    shown.show(15_000, 16384);
    expect(warning().textContent).toContain("fills 92% of the server's context: answers will soon be cut short.");
    const button = warning().querySelector("button")!;
    expect(button.textContent).toBe("New conversation");
    button.click();
    expect(startNew).toHaveBeenCalledTimes(1);
    shown.show(16384, 16384);
    expect(warning().textContent).toContain("further questions will be refused");
    shown.show(undefined, 16384);
    expect(warning().textContent).toBe("");
    expect(meter().hidden).toBe(true);
  });
});
