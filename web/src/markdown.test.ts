// @vitest-environment jsdom
import { beforeAll, describe, expect, it } from "vitest";
import { highlighter, mathsRenderer } from "./lazy_modules";
import { jsonCodeBlock, renderMarkdown } from "./markdown";

// Code colours and maths as drawn once their modules have arrived (lazy_modules.ts).
beforeAll(() => Promise.all([highlighter.load(), mathsRenderer.load()]));

function render(text: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = renderMarkdown(text);
  return root;
}

describe("renderMarkdown", () => {
  it("renders tables, lists and code", () => {
    const root = render("| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n```js\nlet x = 1 < 2;\n```\n");
    expect([...root.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["a", "b"]);
    expect([...root.querySelectorAll("td")].map((td) => td.textContent)).toEqual(["1", "2"]);
    expect(root.querySelectorAll("li")).toHaveLength(2);
    expect(root.querySelector("pre code")?.textContent).toBe("let x = 1 < 2;\n");
  });

  it("keeps the lines of text read off an image", () => {
    const root = render("ACME Store\n12 Main St.\nTotal: $4.20\n\nThank you!");
    const [receipt, thanks] = [...root.querySelectorAll("p")];
    expect(receipt.innerHTML).toBe("ACME Store<br>12 Main St.<br>Total: $4.20");
    expect(thanks.textContent).toBe("Thank you!");
  });

  it("keeps the column alignment of tables", () => {
    const root = render("| a | b | c |\n|:--|--:|:-:|\n| 1 | 2 | 3 |\n");
    expect([...root.querySelectorAll("td")].map((td) => td.getAttribute("align"))).toEqual(["left", "right", "center"]);
  });

  it("shows task list boxes as labelled glyphs, never as form controls", () => {
    const root = render("- [x] done\n- [ ] pending\n\n1. [x] loose\n\n2. [ ] list\n");
    expect(root.querySelectorAll("input")).toHaveLength(0);
    const marks = [...root.querySelectorAll("li > [role=img], li > p > [role=img]")];
    expect(marks.map((mark) => [mark.textContent, mark.getAttribute("aria-label")])).toEqual([
      ["☑", "Done"],
      ["☐", "Not done"],
      ["☑", "Done"],
      ["☐", "Not done"],
    ]);
    expect([...root.querySelectorAll("li")].map((li) => li.textContent?.trim())).toEqual([
      "☑ done",
      "☐ pending",
      "☑ loose",
      "☐ list",
    ]);
  });

  it("strips script, event handlers, javascript: links and remote images", () => {
    const html = renderMarkdown(
      '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n<p onclick="alert(3)">hi</p>\n\n' +
        '[link](javascript:alert(4)) ![pic](https://example.com/t.png)\n\n<iframe src="https://example.com"></iframe>' +
        '<a href="https://example.com" onmouseover="alert(5)">ok</a><svg><script>alert(6)</script></svg>',
    );
    expect(html).not.toMatch(/<script|onerror|onclick|onmouseover|javascript:|<img|<iframe|<svg|alert\(\d\)<\//i);
    const root = render("[site](https://example.com)");
    const link = root.querySelector("a");
    expect(link?.getAttribute("href")).toBe("https://example.com");
    expect(link?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(link?.getAttribute("target")).toBe("_blank");
  });

  it("drops style and class attributes", () => {
    expect(renderMarkdown('<span style="position:fixed" class="overlay">x</span>')).toBe("<p><span>x</span></p>\n");
  });

  it("shows grounding tokens as readable text", () => {
    const root = render("<|object_ref_start|>cat<|object_ref_end|><|box_start|>(1,2),(3,4)<|box_end|>");
    expect(root.textContent?.trim()).toBe("cat (1,2),(3,4)");
    expect(root.querySelector("code")?.textContent).toBe("(1,2),(3,4)");
  });

  it("keeps model-written buttons and handlers out, so only the page adds controls", () => {
    const root = render('```\ncode\n```\n\n<button onclick="alert(1)">Copy code</button>');
    expect(root.querySelectorAll("button")).toHaveLength(0);
    expect(root.innerHTML).not.toMatch(/onclick/);
    expect(root.querySelector("pre code")?.textContent).toBe("code\n");
  });
});

describe("jsonCodeBlock", () => {
  it("shows a JSON answer indented in a JSON code block", () => {
    expect(jsonCodeBlock('{"name":"ACME","total":12.5}')).toBe(
      '```json\n{\n  "name": "ACME",\n  "total": 12.5\n}\n```',
    );
    const root = render(jsonCodeBlock('{"a":[1,2]}'));
    expect(root.querySelector("pre code")?.textContent).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}\n');
  });

  it("shows incomplete JSON as it came, fenced past any backticks inside", () => {
    expect(jsonCodeBlock('{"a": "x')).toBe('```json\n{"a": "x\n```');
    const tricky = jsonCodeBlock('{"code":"````"}');
    expect(tricky.startsWith("`````json\n")).toBe(true);
    expect(render(tricky).querySelector("pre code")?.textContent).toBe('{\n  "code": "````"\n}\n');
    expect(jsonCodeBlock("")).toBe("");
    expect(jsonCodeBlock("```json\n{}\n```")).toBe("```json\n{}\n```");
  });
});
