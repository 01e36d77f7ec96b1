// The tiny fixture model served as a Qwen3-VL Thinking model: its folder with the Thinking
// chat template (tests/data/qwen3vl-thinking) in place of its Instruct one, as the C++
// tests' ThinkingModelFolder builds it. Its random weights never write "</think>" by
// themselves, so its reasoning runs until the answer's length or a thinking budget ends it.
import { copyFileSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_DATA, TINY_MODEL } from "./qvl_server";

const TEMPLATE = "chat_template.json";

export interface ModelFolder {
  dir: string;
  remove(): void;
}

/** A temporary folder of links to the tiny model's files, but for its chat template. */
export function thinkingModelFolder(): ModelFolder {
  const dir = mkdtempSync(join(tmpdir(), "qvl-thinking-"));
  for (const name of readdirSync(TINY_MODEL)) {
    if (name !== TEMPLATE) symlinkSync(join(TINY_MODEL, name), join(dir, name));
  }
  copyFileSync(join(TEST_DATA, "qwen3vl-thinking", TEMPLATE), join(dir, TEMPLATE));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
