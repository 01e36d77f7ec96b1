// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import { FoldedText, isLongText } from "./folded_text";

describe("a long question", () => {
  it("is one past a few lines or a few hundred characters", () => {
    expect(isLongText("What is in this picture?")).toBe(false);
    const lines = (n: number) => Array(n).fill("a line").join("\n");
    expect(isLongText(lines(8))).toBe(false);
    expect(isLongText(lines(9))).toBe(true);
    expect(isLongText("x".repeat(601))).toBe(true);
  });

  it("is folded with a button that unfolds and folds it again", () => {
    const unfolded = vi.fn();
    const pasted = "word ".repeat(12_000);
    const folded = new FoldedText(pasted, unfolded);
    document.body.replaceChildren(folded.text, folded.toggle);
    folded.toggle.scrollIntoView = vi.fn();
    expect(folded.text.textContent).toBe(pasted);
    expect(folded.text.classList.contains("is-folded")).toBe(true);
    expect(folded.toggle.hidden).toBe(false);
    expect(folded.toggle.textContent).toBe("Show more");
    expect(folded.toggle.getAttribute("aria-expanded")).toBe("false");
    expect(folded.toggle.getAttribute("aria-controls")).toBe(folded.text.id);
    expect(folded.toggle.type).toBe("button");

    folded.toggle.click();
    expect(unfolded).toHaveBeenCalledTimes(1);
    expect(folded.text.classList.contains("is-folded")).toBe(false);
    expect(folded.toggle.textContent).toBe("Show less");
    expect(folded.toggle.getAttribute("aria-expanded")).toBe("true");

    folded.toggle.click();
    expect(folded.text.classList.contains("is-folded")).toBe(true);
    expect(folded.toggle.scrollIntoView).toHaveBeenCalled();
    expect(unfolded).toHaveBeenCalledTimes(1);
  });

  it("is not folded when short, also after an edit made it so", () => {
    const folded = new FoldedText("x".repeat(700), () => {});
    folded.set("Short now.");
    expect(folded.text.classList.contains("is-folded")).toBe(false);
    expect(folded.toggle.hidden).toBe(true);
    folded.set("");
    expect(folded.text.hidden).toBe(true);
  });
});
