// Renders model output as Markdown (GitHub flavour: tables, lists, code with syntax
// colours, TeX maths) and sanitizes the HTML, so nothing the model writes can run
// script, load remote content or restyle the page.
import DOMPurify from "dompurify";
import { Marked } from "marked";
import { escapeHtml } from "./dom";
import { readableGroundingMarkup } from "./grounding/parse";
import { highlighter, MissingModules } from "./lazy_modules";
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

// What the render under way lacks (parsing is synchronous, so one at a time).
let missing = new MissingModules();

// A line break the model writes is kept (as ChatGPT and Open WebUI keep it): text read
// off an image comes line by line, and an address or a receipt joined into one paragraph
// is wrong. Task list boxes as glyphs: marked's <input> checkboxes are forbidden above,
// and would look clickable though nothing they do is kept.
const markdown = new Marked({
  gfm: true,
  breaks: true,
  extensions: MATHS_EXTENSIONS,
  renderer: {
    checkbox: ({ checked }) =>
      `<span role="img" aria-label="${checked ? "Done" : "Not done"}">${checked ? "☑" : "☐"}</span> `,
    code: ({ text, lang }) => {
      const colours = highlighter.loaded;
      if (!colours) {
        if (lang?.trim()) missing.need(highlighter);
        return `<pre><code>${escapeHtml(text)}\n</code></pre>\n`;
      }
      const language = colours.knownLanguage(lang);
      const named = language ? ` class="hljs language-${escapeHtml(language)}"` : "";
      return `<pre><code${named}>${colours.highlightCode(text, lang)}\n</code></pre>\n`;
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

/**
 * The answer's HTML. Code colours and maths need modules fetched on first use: until
 * they are there, code is plain and maths its source, and `onLoaded` is called once they
 * have arrived, to render again.
 */
export function renderMarkdown(text: string, onLoaded?: () => void): string {
  installHooks();
  missing = new MissingModules();
  const html = markdown.parse(readableGroundingMarkup(text), { async: false });
  const safe = DOMPurify.sanitize(html, {
    FORBID_TAGS,
    FORBID_ATTR: ["style", "class", "id"],
    ALLOW_DATA_ATTR: false,
    ADD_TAGS: MATHS_PLACEHOLDER_TAGS,
  });
  const rendered = fillInMaths(safe, missing);
  if (onLoaded) missing.whenLoaded(onLoaded);
  return rendered;
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
