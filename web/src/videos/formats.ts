// The video files qvl serve decodes (with FFmpeg): the one list behind the pickers'
// accept attribute, the words of "use a ... file" messages, the media type a file is
// sent as, and the words for a file over the server's size or length. Browsers name some of these files oddly or
// not at all (a dropped .mkv often has no type), so a file's name and first bytes count
// too, as the server itself recognises a video from its bytes.

export interface VideoFormat {
  name: string;
  mimeType: string;
  /** Other types browsers give the same files. */
  aliases: string[];
  extensions: string[];
}

export const VIDEO_FORMATS: readonly VideoFormat[] = [
  { name: "MP4", mimeType: "video/mp4", aliases: ["video/x-m4v"], extensions: [".mp4", ".m4v"] },
  { name: "MOV", mimeType: "video/quicktime", aliases: [], extensions: [".mov", ".qt"] },
  { name: "WebM", mimeType: "video/webm", aliases: [], extensions: [".webm"] },
  { name: "Matroska", mimeType: "video/x-matroska", aliases: ["video/mkv"], extensions: [".mkv"] },
  { name: "AVI", mimeType: "video/x-msvideo", aliases: ["video/avi", "video/msvideo"], extensions: [".avi"] },
  { name: "MPEG-TS", mimeType: "video/mp2t", aliases: ["video/mpeg"], extensions: [".ts", ".mts", ".m2ts"] },
  { name: "FLV", mimeType: "video/x-flv", aliases: [], extensions: [".flv"] },
  { name: "Ogg", mimeType: "video/ogg", aliases: [], extensions: [".ogv"] },
];

export const VIDEO_ACCEPT_ATTRIBUTE = VIDEO_FORMATS.flatMap((format) => [format.mimeType, ...format.extensions]).join(
  ",",
);

/** "MP4, MOV, WebM, Matroska, AVI, MPEG-TS, FLV or Ogg" */
export const VIDEO_FORMAT_NAMES = listWithOr(VIDEO_FORMATS.map((format) => format.name));

function listWithOr(words: string[]): string {
  return words.length < 2 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? "" : name.slice(dot).toLowerCase();
}

/**
 * The media type to send a file as when its type or name says it is one of the
 * server's video formats; undefined otherwise (an image, or a file to sniff).
 */
export function videoTypeOf(type: string, name: string): string | undefined {
  const lower = type.toLowerCase();
  const byType = VIDEO_FORMATS.find((f) => f.mimeType === lower || f.aliases.includes(lower));
  if (byType) return byType.mimeType;
  // Any other video/* type is worth a try: the server judges the bytes.
  if (lower.startsWith("video/")) return lower;
  if (lower && lower !== "application/octet-stream") return undefined;
  return VIDEO_FORMATS.find((f) => f.extensions.includes(extensionOf(name)))?.mimeType;
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (bytes.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

// An MPEG transport stream is 188-byte packets, each starting with 0x47.
const TS_PACKET = 188;

/** The format the first bytes of a file announce, for files with no type or name. */
export function sniffVideoType(head: Uint8Array): string | undefined {
  if (ascii(head, 4, "ftyp")) return ascii(head, 8, "qt  ") ? "video/quicktime" : "video/mp4";
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) {
    // EBML: WebM says so in its DocType near the start.
    for (let i = 4; i + 4 <= Math.min(head.length, 64); i++) if (ascii(head, i, "webm")) return "video/webm";
    return "video/x-matroska";
  }
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "AVI ")) return "video/x-msvideo";
  if (ascii(head, 0, "FLV")) return "video/x-flv";
  if (ascii(head, 0, "OggS")) return "video/ogg";
  if (head.length > 2 * TS_PACKET && head[0] === 0x47 && head[TS_PACKET] === 0x47 && head[2 * TS_PACKET] === 0x47) {
    return "video/mp2t";
  }
  return undefined;
}

/** Bytes sniffVideoType looks at. */
export const SNIFF_BYTES = 2 * TS_PACKET + 1;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GB`;
}

/** Why a video of `bytes` cannot be sent to a server that takes `maxBytes`, or undefined when it can. */
export function videoSizeProblem(name: string, bytes: number, maxBytes: number): string | undefined {
  if (bytes === 0) return `"${name}" is empty.`;
  if (bytes <= maxBytes) return undefined;
  return `"${name}" is ${formatBytes(bytes)}, over the server's limit of ${formatBytes(maxBytes)} per video. Trim or compress it first.`;
}

/** Why a clip of `seconds` cannot be sent to a server that takes `maxSeconds`, or undefined when it can. */
export function videoLengthProblem(name: string, seconds: number, maxSeconds: number): string | undefined {
  if (seconds <= maxSeconds) return undefined;
  return `"${name}" is ${formatClipDuration(seconds)} long, over the server's limit of ${formatClipDuration(maxSeconds)} per video. Trim it first.`;
}

/** "0:07", "1:05:09": a clip's length as players show it. */
export function formatClipDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}
