// Syntax colours for fenced code blocks. Only the core of highlight.js and the languages
// models write most are bundled (the page is compiled into the server); a block in any
// other language, or none, stays plain. Loaded only when an answer has a fenced block
// with a language (lazy_modules.ts).
import { escapeHtml } from "./dom";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, c, cpp, css, javascript, json, markdown, python, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** The name highlight.js knows a fence's language by ("py" is python), or undefined. */
export function knownLanguage(fenceInfo: string | undefined): string | undefined {
  const name = fenceInfo?.trim().split(/\s/)[0]?.toLowerCase();
  return name ? hljs.getLanguage(name)?.name && name : undefined;
}

/** The code as HTML: coloured spans (class "hljs-…") in a known language, else escaped text. */
export function highlightCode(code: string, fenceInfo: string | undefined): string {
  const language = knownLanguage(fenceInfo);
  if (!language) return escapeHtml(code);
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}
