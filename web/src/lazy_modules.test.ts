// @vitest-environment jsdom
// Code colours and maths before and after their modules arrive. Each test file runs in
// its own module registry, so here neither module has been loaded yet.
import { describe, expect, it, vi } from "vitest";
import { highlighter, LazyModule, mathsRenderer } from "./lazy_modules";
import { renderMarkdown } from "./markdown";
import { answerViewFor } from "./ui/answer_view_for_test";
import type { AnswerView } from "./ui/message_views";

function answerView(text: string): AnswerView {
  return answerViewFor({ id: "a1", role: "assistant", text, status: "done" });
}

describe("modules loaded on first use", () => {
  it("are not fetched for an answer without maths or a code block in a named language", async () => {
    const onLoaded = vi.fn();
    const html = renderMarkdown("Just text, `code`, $5 and $10.\n\n```\nplain block\n```", onLoaded);
    expect(html).toContain("plain block");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(onLoaded).not.toHaveBeenCalled();
    expect(highlighter.loaded).toBeUndefined();
    expect(mathsRenderer.loaded).toBeUndefined();
  });

  it("show code plain and maths as its source until they arrive, then the answer is drawn with them", async () => {
    const view = answerView("Area $\\pi r^2$:\n\n```python\ndef area(r):\n    return 3.14 * r ** 2\n```");
    const body = view.element.querySelector(".markdown")!;
    expect(body.querySelector("pre code")?.textContent).toBe("def area(r):\n    return 3.14 * r ** 2\n");
    expect(body.querySelector(".hljs-keyword")).toBeNull();
    expect(body.querySelector(".maths-source")?.textContent).toBe("$\\pi r^2$");
    await vi.waitFor(() => expect(body.querySelector(".hljs-keyword")?.textContent).toBe("def"));
    expect(body.querySelector(".maths")?.getAttribute("aria-label")).toBe("\\pi r^2");
    expect(body.querySelector(".maths-source")).toBeNull();
  });

  it("are fetched again by the next render after a failed fetch (the server was away)", async () => {
    const importModule = vi
      .fn<() => Promise<string>>()
      .mockRejectedValueOnce(new TypeError("Failed to fetch dynamically imported module"))
      .mockResolvedValueOnce("module");
    const lazy = new LazyModule(importModule);
    await expect(lazy.load()).rejects.toThrow("Failed to fetch");
    expect(lazy.loaded).toBeUndefined();
    await expect(lazy.load()).resolves.toBe("module");
    expect(lazy.loaded).toBe("module");
    await lazy.load();
    expect(importModule).toHaveBeenCalledTimes(2);
  });
});
