// @vitest-environment jsdom
import { beforeAll, describe, expect, it } from "vitest";
import { highlighter, mathsRenderer } from "./lazy_modules";
import { highlightCode, knownLanguage } from "./highlight";
import { renderMarkdown } from "./markdown";

// Code colours and maths as drawn once their modules have arrived (lazy_modules.ts).
beforeAll(() => Promise.all([highlighter.load(), mathsRenderer.load()]));

function codeBlock(text: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = renderMarkdown(text);
  return root.querySelector("pre code")!;
}

describe("syntax colours", () => {
  it("knows the common languages by name and alias, and no others", () => {
    const names = ["json", "python", "py", "javascript", "js", "typescript", "ts", "bash", "sh", "shell", "c", "cpp"];
    const more = ["c++", "html", "xml", "svg", "css", "sql", "yaml", "yml", "markdown", "md"];
    for (const name of [...names, ...more]) expect(knownLanguage(name), name).toBe(name);
    expect(knownLanguage("Python {linenos}")).toBe("python");
    for (const name of ["rust", "haskell", "", undefined, "plaintext"]) expect(knownLanguage(name)).toBeUndefined();
  });

  it("colours a block in a known language, keeping its text exactly", () => {
    const code = 'def area(r):\n    return 3.14 * r ** 2  # "pi"\n';
    const block = codeBlock(`\`\`\`python\n${code}\`\`\``);
    expect(block.className).toBe("hljs language-python");
    expect(block.querySelector(".hljs-keyword")?.textContent).toBe("def");
    expect(block.querySelector(".hljs-comment")?.textContent).toBe('# "pi"');
    expect(block.textContent).toBe(code);
    expect(codeBlock('```json\n{"a": [1, true]}\n```').querySelector(".hljs-attr")?.textContent).toBe('"a"');
  });

  it("leaves a block in an unknown language, or none, plain and escaped", () => {
    for (const fence of ["```rust", "```"]) {
      const block = codeBlock(`${fence}\nfn main() { let x = 1 < 2; }\n\`\`\``);
      expect(block.children).toHaveLength(0);
      expect(block.className).toBe("");
      expect(block.textContent).toBe("fn main() { let x = 1 < 2; }\n");
    }
    expect(highlightCode("<b>", "brainfuck")).toBe("&#60;b&#62;");
  });

  it("keeps only the colour classes: the model's own classes and styles go", () => {
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown(
      '<span class="hljs-keyword">ok</span> <span class="banner hljs-keyword">x</span> <span style="position:fixed">y</span> <div class="hljs">z</div>',
    );
    expect([...root.querySelectorAll("[class]")].map((node) => node.className)).toEqual(["hljs-keyword"]);
    expect(root.querySelectorAll("[style]")).toHaveLength(0);
  });

  it("colours a code block still being written, its fence not yet closed", () => {
    const block = codeBlock("```python\nimport os\nprint(os.");
    expect(block.querySelector(".hljs-keyword")?.textContent).toBe("import");
    expect(block.textContent).toBe("import os\nprint(os.\n");
  });
});
