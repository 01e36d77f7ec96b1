// Finds Qwen3-VL grounding output in an answer. Coordinates are relative to the image,
// 0..1000 on each axis, whatever its size. Accepted forms:
//   JSON (often inside ```json fences):  {"bbox_2d": [x1, y1, x2, y2], "label": "cat"}
//                                        {"point_2d": [x, y], "label": "cup"}
//   Qwen2-VL style special tokens:       <|object_ref_start|>cat<|object_ref_end|>
//                                        <|box_start|>(x1,y1),(x2,y2)<|box_end|>
//   Qwen-VL style tags:                  <ref>cat</ref><box>(x1,y1),(x2,y2)</box>
// The scan is tolerant: objects that are cut off (a stream in progress, an answer that
// hit the token limit) or embedded in prose are skipped or picked up one by one rather
// than failing the whole answer.

export interface GroundingBox {
  kind: "box";
  label: string;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface GroundingPoint {
  kind: "point";
  label: string;
  x: number;
  y: number;
}

export type Grounding = GroundingBox | GroundingPoint;

export const COORDINATE_SCALE = 1000;

const NUMBER = String.raw`(-?\d+(?:\.\d+)?)`;
const SEP = String.raw`\s*,\s*`;
const BBOX_KEY = String.raw`["']?bbox_2d["']?\s*:\s*`;
const POINT_KEY = String.raw`["']?point_2d["']?\s*:\s*`;
const BBOX_RE = new RegExp(`${BBOX_KEY}\\[\\s*${NUMBER}${SEP}${NUMBER}${SEP}${NUMBER}${SEP}${NUMBER}\\s*\\]`);
const POINT_RE = new RegExp(`${POINT_KEY}\\[\\s*${NUMBER}${SEP}${NUMBER}\\s*\\]`);
const LABEL_KEYS = ["label", "text_content", "text", "name", "category", "object"];
const POINT_PAIR_RE = new RegExp(`\\(\\s*${NUMBER}${SEP}${NUMBER}\\s*\\)`, "g");
const TAG_RE =
  /<\|object_ref_start\|>([\s\S]*?)<\|object_ref_end\|>|<ref>([\s\S]*?)<\/ref>|<\|box_start\|>([\s\S]*?)<\|box_end\|>|<box>([\s\S]*?)<\/box>/g;

export function parseGrounding(text: string): Grounding[] {
  const found = [...parseJsonObjects(text), ...parseTags(text)];
  const seen = new Set<string>();
  return found.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Innermost {...} objects that name bbox_2d or point_2d. */
function parseJsonObjects(text: string): Grounding[] {
  const items: Grounding[] = [];
  for (const match of text.matchAll(/\{[^{}]*\}/g)) {
    const object = match[0];
    const label = labelOf(object);
    const box = BBOX_RE.exec(object);
    if (box) {
      const item = makeBox(label, box.slice(1, 5).map(Number));
      if (item) items.push(item);
      continue;
    }
    const point = POINT_RE.exec(object);
    if (point) {
      const item = makePoint(label, Number(point[1]), Number(point[2]));
      if (item) items.push(item);
    }
  }
  return items;
}

function labelOf(object: string): string {
  for (const key of LABEL_KEYS) {
    const match = new RegExp(`["']${key}["']\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(object);
    if (!match) continue;
    try {
      return String(JSON.parse(`"${match[1]}"`)).trim();
    } catch {
      return match[1].trim();
    }
  }
  return "";
}

/** Special-token and tag forms: a box takes the label of the reference before it. */
function parseTags(text: string): Grounding[] {
  const items: Grounding[] = [];
  let label = "";
  for (const match of text.matchAll(TAG_RE)) {
    const ref = match[1] ?? match[2];
    if (ref !== undefined) {
      label = ref.trim();
      continue;
    }
    const points = [...(match[3] ?? match[4] ?? "").matchAll(POINT_PAIR_RE)].map((p) => [Number(p[1]), Number(p[2])]);
    for (let i = 0; i + 1 < points.length; i += 2) {
      const item = makeBox(label, [...points[i], ...points[i + 1]]);
      if (item) items.push(item);
    }
    if (points.length === 1) {
      const item = makePoint(label, points[0][0], points[0][1]);
      if (item) items.push(item);
    }
  }
  return items;
}

function clamp(value: number): number {
  return Math.min(COORDINATE_SCALE, Math.max(0, value));
}

function makeBox(label: string, values: number[]): GroundingBox | null {
  if (values.length !== 4 || !values.every(Number.isFinite)) return null;
  const [a, b, c, d] = values.map(clamp);
  const box = {
    kind: "box" as const,
    label,
    x1: Math.min(a, c),
    y1: Math.min(b, d),
    x2: Math.max(a, c),
    y2: Math.max(b, d),
  };
  return box.x2 > box.x1 && box.y2 > box.y1 ? box : null;
}

function makePoint(label: string, x: number, y: number): GroundingPoint | null {
  if (!Number.isFinite(x) || !Number.isFinite(y)) return null;
  return { kind: "point", label, x: clamp(x), y: clamp(y) };
}

/**
 * Rewrites grounding tokens into readable text for display: the reference label stays,
 * a box becomes its coordinates in a code span. JSON is left alone (it renders as code).
 */
export function readableGroundingMarkup(text: string): string {
  return text
    .replace(/<\|object_ref_start\|>|<\|object_ref_end\|>|<\/?ref>/g, "")
    .replace(/<\|box_start\|>([\s\S]*?)<\|box_end\|>|<box>([\s\S]*?)<\/box>/g, (_m, a, b) => {
      const inner = String(a ?? b)
        .replace(/\s+/g, "")
        .replace(/`/g, "");
      return ` \`${inner}\``;
    });
}
