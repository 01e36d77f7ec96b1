// Renders model output as Markdown (GitHub flavour: tables, lists, code with syntax
// colours, TeX maths) and sanitizes the HTML, so nothing the model writes can run
// script, load remote content or restyle the page.
import DOMPurify from "dompurify";
import { Marked } from "marked";
import { readableGroundingMarkup } from "./grounding/parse";
import { escapeHtml, highlightCode, knownLanguage } from "./highlight";
import { fillInMaths, MATHS_EXTENSIONS, MATHS_PLACEHOLDER_TAGS } from "./maths";

// Images and media would fetch remote URLs chosen by the model; forms and styles could
// imitate or restyle the page.
const FORBID_TAGS = [
  "img",
  "picture",
  "video",
  "audio",
  "source",
  "style",
  "form",
  "input",
  "button",
  "textarea",
  "select",
  "svg",
  "math",
];

// Task list boxes as glyphs: marked's <input> checkboxes are forbidden above, and would
// look clickable though nothing they do is kept.
const markdown = new Marked({
  gfm: true,
  breaks: false,
  extensions: MATHS_EXTENSIONS,
  renderer: {
    checkbox: ({ checked }) =>
      `<span role="img" aria-label="${checked ? "Done" : "Not done"}">${checked ? "☑" : "☐"}</span> `,
    code: ({ text, lang }) => {
      const language = knownLanguage(lang);
      const named = language ? ` class="hljs language-${escapeHtml(language)}"` : "";
      return `<pre><code${named}>${highlightCode(text, lang)}\n</code></pre>\n`;
    },
  },
});

// Syntax colours are classes; the model's own class attributes are dropped, except these,
// which can do no more than colour text.
const HIGHLIGHT_CLASS = /^(?:hljs(?:-[\w-]+)?|language-[\w+#.-]+|[a-z]+_)$/;

function isHighlightClass(value: string): boolean {
  return value.split(/\s+/).every((name) => HIGHLIGHT_CLASS.test(name));
}

let hooksInstalled = false;

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  DOMPurify.addHook("uponSanitizeAttribute", (node, event) => {
    if (event.attrName === "class" && /^(CODE|SPAN)$/.test(node.nodeName) && isHighlightClass(event.attrValue)) {
      event.forceKeepAttr = true;
    }
  });
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

export function renderMarkdown(text: string): string {
  installHooks();
  const html = markdown.parse(readableGroundingMarkup(text), { async: false });
  const safe = DOMPurify.sanitize(html, {
    FORBID_TAGS,
    FORBID_ATTR: ["style", "class", "id"],
    ALLOW_DATA_ATTR: false,
    ADD_TAGS: MATHS_PLACEHOLDER_TAGS,
  });
  return fillInMaths(safe);
}

/**
 * A JSON answer as a JSON code block, indented once it parses (while it streams in it
 * does not yet). An answer that already is a code block stays as it is.
 */
export function jsonCodeBlock(text: string): string {
  const trimmed = text.trim();
  if (!trimmed || trimmed.startsWith("```")) return text;
  let body = trimmed;
  try {
    body = JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    // Not complete yet, or not JSON after all: shown as it came.
  }
  // The fence must be longer than any run of backticks inside the JSON strings.
  const longestRun = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return `${fence}json\n${body}\n${fence}`;
}
