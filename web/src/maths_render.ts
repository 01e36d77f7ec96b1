// One formula drawn by KaTeX, with KaTeX's style sheet and fonts: loaded only when an
// answer has maths (lazy_modules.ts). KaTeX's HTML is sanitized on its own: it needs the
// class and style attributes the answer's HTML may not have.
import DOMPurify from "dompurify";
import katex from "katex";
import "katex/dist/katex.min.css";
import { escapeHtml } from "./dom";

// KaTeX draws with spans, and some delimiters and arrows with inline SVG; with `trust`
// off it makes no links, images or other requests.
const MATHS_FORBID_TAGS = ["a", "img", "image", "use", "foreignObject", "style", "form", "input", "button"];

/** One formula, as written with its delimiters, as HTML: KaTeX's, or the source where
 * KaTeX cannot read it. */
export function renderMaths(source: string): string {
  const display = source.startsWith("$$") || source.startsWith("\\[");
  const delimiter = display || source.startsWith("\\(") ? 2 : 1;
  const tex = source.slice(delimiter, -delimiter).trim();
  try {
    // strict "ignore": with KaTeX's default ("warn") every Chinese or Cyrillic letter
    // written as maths is a console warning, again at each render of a streaming answer;
    // the drawing is the same.
    const html = katex.renderToString(tex, {
      displayMode: display,
      output: "html",
      throwOnError: true,
      trust: false,
      strict: "ignore",
    });
    const safe = DOMPurify.sanitize(html, { FORBID_TAGS: MATHS_FORBID_TAGS, ALLOW_DATA_ATTR: false });
    // The drawing is spans of glyphs: a screen reader reads the TeX instead.
    return `<span class="maths${display ? " maths-display" : ""}" role="img" aria-label="${escapeHtml(tex)}">${safe}</span>`;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `<code class="maths-error" title="${escapeHtml(why)}">${escapeHtml(source)}</code>`;
  }
}
