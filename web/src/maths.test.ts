// @vitest-environment jsdom
import katex from "katex";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { highlighter, mathsRenderer } from "./lazy_modules";
import { renderMarkdown } from "./markdown";
import { renderMaths } from "./maths_render";

// Code colours and maths as drawn once their modules have arrived (lazy_modules.ts).
beforeAll(() => Promise.all([highlighter.load(), mathsRenderer.load()]));

function render(text: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = renderMarkdown(text);
  return root;
}

/** The TeX of each formula drawn, display ones marked with "display:". */
function formulas(text: string): string[] {
  return [...render(text).querySelectorAll(".maths")].map(
    (node) => `${node.classList.contains("maths-display") ? "display:" : ""}${node.getAttribute("aria-label")}`,
  );
}

describe("maths delimiters", () => {
  it("reads $…$ and \\(…\\) in a line, $$…$$ and \\[…\\] set apart", () => {
    expect(formulas("Area $\\pi r^2$, or \\(a+b\\).")).toEqual(["\\pi r^2", "a+b"]);
    expect(formulas("$$\n\\int_0^1 x\\,dx\n$$\n\nthen\n\n\\[\n\\frac{1}{2}\n\\]\n")).toEqual([
      "display:\\int_0^1 x\\,dx",
      "display:\\frac{1}{2}",
    ]);
    expect(formulas("So $$e^{i\\pi} = -1$$ in a line.")).toEqual(["display:e^{i\\pi} = -1"]);
  });

  it("leaves prices and escaped dollars as they are", () => {
    expect(formulas("It costs $5 and $10.")).toEqual([]);
    expect(render("It costs $5 and $10.").textContent?.trim()).toBe("It costs $5 and $10.");
    expect(formulas("From $5 to $10, where $x$ is the tax.")).toEqual(["x"]);
    expect(formulas("$5/$10 a month")).toEqual([]);
    expect(formulas("\\$x\\$ and $ x $")).toEqual([]);
  });

  it("never touches code spans and code blocks", () => {
    expect(formulas("It costs $10, and `$x$` is code.")).toEqual([]);
    const root = render("`$x$` and `\\(y\\)`\n\n```latex\n$$\\frac{a}{b}$$\n```\n\n```\n$x$\n```\n");
    expect(root.querySelectorAll(".maths")).toHaveLength(0);
    expect([...root.querySelectorAll("code")].map((code) => code.textContent)).toEqual([
      "$x$",
      "\\(y\\)",
      "$$\\frac{a}{b}$$\n",
      "$x$\n",
    ]);
  });

  it("shows the source where KaTeX cannot read it, and the rest of the answer", () => {
    const root = render("Before $\\frac{a$ and after, $\\undefinedmacro$.");
    expect([...root.querySelectorAll("code.maths-error")].map((code) => code.textContent)).toEqual([
      "$\\frac{a$",
      "$\\undefinedmacro$",
    ]);
    expect(root.querySelector("code.maths-error")?.getAttribute("title")).toMatch(/KaTeX parse error/);
    expect(root.textContent?.trim()).toMatch(/^Before .* and after, .*\.$/);
  });

  it("shows an unfinished formula as text while the answer streams in", () => {
    const shown: Record<string, string> = {
      // The line break drawn as one (<br>), which has no text.
      "The sum $$\n\\sum_{i=1}^n i": "The sum $$\\sum_{i=1}^n i",
      "So $x^2 + ": "So $x^2 +",
      // Markdown's escape, until the formula closes.
      "then \\(a": "then (a",
      $$x$: "$$x$",
    };
    for (const [partial, text] of Object.entries(shown)) {
      const root = render(partial);
      expect(root.querySelectorAll(".maths, .maths-error")).toHaveLength(0);
      expect(root.textContent?.trim()).toBe(text);
    }
  });

  it("keeps KaTeX's drawing whole through sanitizing, SVG and styles included", () => {
    for (const tex of [
      "\\sqrt{x^2+1}",
      "\\begin{pmatrix}a&b\\\\c&d\\end{pmatrix}",
      "\\overrightarrow{AB}",
      "\\color{red}{x}",
    ]) {
      const drawn = document.createElement("div");
      drawn.innerHTML = renderMaths(`$${tex}$`);
      const expected = document.createElement("div");
      expected.innerHTML = katex.renderToString(tex, { output: "html" });
      expect(drawn.querySelector(".maths")!.innerHTML).toBe(expected.innerHTML);
    }
    expect(renderMaths("$\\sqrt{x}$")).toContain("<svg");
  });

  it("draws letters of other scripts in a formula without a console warning", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const drawn = document.createElement("div");
      drawn.innerHTML = renderMaths("$价格 = x + у$");
      expect(drawn.querySelector(".maths .katex")).not.toBeNull();
      expect(drawn.querySelector(".maths")!.textContent).toContain("价格");
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it("makes no links, images or scripts from TeX", () => {
    const root = render(
      "$\\href{javascript:alert(1)}{x}$ $\\includegraphics{http://example.com/a.png}$ $\\url{http://x}$",
    );
    expect(root.querySelectorAll("a, img, script")).toHaveLength(0);
  });
});
