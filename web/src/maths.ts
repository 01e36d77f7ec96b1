// TeX maths in answers, drawn by KaTeX: $…$ and \(…\) in a line, $$…$$ and \[…\] set
// apart. A dollar sign opens maths only when a non-space follows it, and closes it only
// after a non-space and before a non-digit, so "$5 and $10" stays prices. Code spans and
// blocks are Markdown's, so never maths.
//
// Marked leaves a placeholder for each formula; markdown.ts replaces the placeholders
// after the answer's HTML was sanitized, by KaTeX's HTML (maths_render.ts, loaded when
// first needed) or, until KaTeX has arrived, by the formula's source.
import type { TokenizerAndRendererExtension, Tokens } from "marked";
import { escapeHtml } from "./dom";
import { mathsRenderer, type MissingModules } from "./lazy_modules";

const PLACEHOLDER_TAG = "qvl-math";

// A formula in a line holds no backtick, so that a code span after a dollar sign ("$10,
// `$x$`") stays code.
const INLINE_MATHS = [
  /^\$\$(?!\$)((?:\\[^]|[^\\$`])+?)\$\$/,
  /^\$(?![\s$])((?:\\[^]|[^\\$`])+?)(?<![\s\\])\$(?!\d)/,
  /^\\\(([^]+?)\\\)/,
  /^\\\[([^]+?)\\\]/,
];
const BLOCK_MATHS = [/^ {0,3}\$\$([^]+?)\$\$[ \t]*(?:\n+|$)/, /^ {0,3}\\\[([^]+?)\\\][ \t]*(?:\n+|$)/];

function placeholder(token: Tokens.Generic): string {
  return `<${PLACEHOLDER_TAG}>${escapeHtml(String(token.raw).trim())}</${PLACEHOLDER_TAG}>`;
}

function mathsToken(type: string, patterns: RegExp[], src: string): Tokens.Generic | undefined {
  for (const pattern of patterns) {
    const match = pattern.exec(src);
    if (match && match[1].trim()) return { type, raw: match[0] };
  }
  return undefined;
}

export const MATHS_EXTENSIONS: TokenizerAndRendererExtension[] = [
  {
    name: "blockMaths",
    level: "block",
    start: (src) => /^ {0,3}(?:\$\$|\\\[)/m.exec(src)?.index,
    tokenizer: (src) => mathsToken("blockMaths", BLOCK_MATHS, src),
    renderer: placeholder,
  },
  {
    name: "inlineMaths",
    level: "inline",
    // An escaped dollar (\$) is Markdown's, a dollar sign.
    start: (src) => /(?<!\\)\$|\\[([]/.exec(src)?.index,
    tokenizer: (src) => {
      const maths = mathsToken("inlineMaths", INLINE_MATHS, src);
      if (maths) return maths;
      // "$$" not closed yet (the answer is still coming) is text, not "$" and a formula
      // opening at the second dollar.
      const dollars = /^\$\$+/.exec(src)?.[0];
      return dollars ? { type: "text", raw: dollars, text: dollars } : undefined;
    },
    renderer: placeholder,
  },
];

/** The tags the answer's sanitizer must let through for the placeholders. */
export const MATHS_PLACEHOLDER_TAGS = [PLACEHOLDER_TAG];

function unescapeHtml(text: string): string {
  return text.replace(/&(#\d+|amp|lt|gt|quot|nbsp);/g, (_, entity: string) => {
    if (entity.startsWith("#")) return String.fromCharCode(Number(entity.slice(1)));
    return { amp: "&", lt: "<", gt: ">", quot: '"', nbsp: "\u00a0" }[entity] ?? "";
  });
}

const PLACEHOLDER = new RegExp(`<${PLACEHOLDER_TAG}>([^<]*)</${PLACEHOLDER_TAG}>`, "g");

/** Replaces the placeholders in sanitized HTML by the formulas they stand for; while
 * KaTeX is not loaded, by their source, noting KaTeX in `missing`. */
export function fillInMaths(html: string, missing: MissingModules): string {
  return html.replace(PLACEHOLDER, (_, source: string) => {
    const renderer = mathsRenderer.loaded;
    if (renderer) return renderer.renderMaths(unescapeHtml(source));
    missing.need(mathsRenderer);
    return `<span class="maths-source">${source}</span>`;
  });
}
