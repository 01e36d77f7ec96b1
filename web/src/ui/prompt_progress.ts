// What an answer's status line says before its first token. On a CPU the server may
// spend many seconds encoding the images and reading the prompt; a server that reports
// how far it has come (prompt_progress, asked with return_progress) lets the line say
// so. Without reports (an older server, a cached answer) it names the work only.
import type { PromptProgress } from "../api/types";
import { THINKING } from "./reasoning_view";

/** What the question sent: a video wins over images, as in the suggestions. */
export type AnswerMedia = "video" | "image" | "none";

export interface WaitStatus {
  /** What the server is doing, as a sentence ending in "…". */
  label: string;
  /** How much of it is done, a whole number from 0 to 100; absent when not reported. */
  percent?: number;
}

const WATCHING = "Watching the video…";
const LOOKING = "Looking at the image…";
const READING = "Reading the prompt…";

function finite(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** `share` (0 to 1) in whole percent; rounded down, so that 100% means done. */
export function percentOf(share: number): number {
  return Math.min(100, Math.max(0, Math.floor(share * 100)));
}

export function waitStatus(media: AnswerMedia, progress?: PromptProgress): WaitStatus {
  const named = media === "video" ? WATCHING : media === "image" ? LOOKING : THINKING;
  const vision = finite(progress?.vision);
  if (media !== "none" && vision !== undefined && vision < 1) return { label: named, percent: percentOf(vision) };
  const total = finite(progress?.total);
  const processed = finite(progress?.processed);
  if (total === undefined || processed === undefined || total <= 0) return { label: named };
  return { label: READING, percent: percentOf(processed / total) };
}
