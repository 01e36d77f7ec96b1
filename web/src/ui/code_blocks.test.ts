// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../markdown";
import { addCodeCopyButtons } from "./code_blocks";

describe("addCodeCopyButtons", () => {
  it("puts one copy button beside each code block, copying exactly its code", async () => {
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown("Two blocks:\n\n```python\nprint('hi')\n```\n\ntext\n\n```\na < b\n```\n");
    const copied: string[] = [];
    const copy = async (text: string) => {
      copied.push(text);
    };
    addCodeCopyButtons(root, copy);
    addCodeCopyButtons(root, copy);
    const buttons = root.querySelectorAll<HTMLButtonElement>(".code-block > button.code-copy");
    expect(buttons).toHaveLength(2);
    expect(root.querySelectorAll(".code-block > pre")).toHaveLength(2);
    expect(buttons[0].getAttribute("aria-label")).toBe("Copy code");
    buttons[0].click();
    buttons[1].click();
    await Promise.resolve();
    expect(copied).toEqual(["print('hi')\n", "a < b\n"]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(buttons[0].getAttribute("aria-label")).toBe("Copied");
  });

  it("adds nothing to an answer without code", () => {
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown("Just `inline` code.");
    addCodeCopyButtons(root, async () => {});
    expect(root.querySelectorAll("button")).toHaveLength(0);
  });
});
