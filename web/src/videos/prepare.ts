// Gets a picked, pasted or dropped video ready to send: the file goes as it is (the
// server decodes it with FFmpeg), after its size and length are checked against the
// server's limits, and the browser draws its first frame as a poster and reads its
// length. Browsers play fewer formats than FFmpeg reads (Matroska with HEVC, AVI, RGB
// H.264, ...): such a video is still sent, with a plain placeholder in place of its
// poster.
import type { ServerLimits } from "../api/server_limits";
import { SNIFF_BYTES, sniffVideoType, videoLengthProblem, videoSizeProblem, videoTypeOf } from "./formats";

export interface PreparedVideo {
  blob: Blob;
  name: string;
  /** The media type it is sent as (data:TYPE;base64,...). */
  type: string;
  bytes: number;
  durationS?: number;
  width?: number;
  height?: number;
  /** The first frame as JPEG, when the browser could draw it. */
  poster?: Blob;
}

export class VideoError extends Error {}

// Posters are shown at most ~240 px tall; a larger one only costs storage.
const POSTER_LONGEST_EDGE = 480;
const POSTER_QUALITY = 0.85;
// A browser that cannot decode a file may never say so; the poster is not worth waiting for.
const POSTER_TIMEOUT_MS = 5000;

/** The media type to send `file` as when it is a video, else undefined. */
export async function videoTypeOfFile(file: File): Promise<string | undefined> {
  const named = videoTypeOf(file.type, file.name);
  if (named || file.type !== "") return named;
  try {
    return sniffVideoType(new Uint8Array(await file.slice(0, SNIFF_BYTES).arrayBuffer()));
  } catch {
    return undefined;
  }
}

export async function prepareVideo(file: File, type: string, limits: ServerLimits): Promise<PreparedVideo> {
  const name = file.name || "pasted video";
  const problem = videoSizeProblem(name, file.size, limits.videoBytes);
  if (problem) throw new VideoError(problem);
  const facts = await readPoster(file);
  // A length the browser could not read is left to the server.
  const tooLong = facts.durationS !== undefined && videoLengthProblem(name, facts.durationS, limits.videoSeconds);
  if (tooLong) throw new VideoError(tooLong);
  return { blob: file, name, type, bytes: file.size, ...facts };
}

function once(target: HTMLVideoElement, event: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event}`)), timeoutMs);
    const finish = (ok: boolean) => () => {
      clearTimeout(timer);
      target.removeEventListener(event, onEvent);
      target.removeEventListener("error", onError);
      if (ok) resolve();
      else reject(target.error ?? new Error("the browser cannot play this video"));
    };
    const onEvent = finish(true);
    const onError = finish(false);
    target.addEventListener(event, onEvent);
    target.addEventListener("error", onError);
  });
}

type PosterFacts = Pick<PreparedVideo, "durationS" | "width" | "height" | "poster">;

async function readPoster(blob: Blob): Promise<PosterFacts> {
  const url = URL.createObjectURL(blob);
  const video = document.createElement("video");
  video.muted = true;
  video.playsInline = true;
  video.preload = "auto";
  const facts: PosterFacts = {};
  try {
    const metadata = once(video, "loadedmetadata", POSTER_TIMEOUT_MS);
    const firstFrame = once(video, "loadeddata", POSTER_TIMEOUT_MS);
    firstFrame.catch(() => undefined);
    video.src = url;
    await metadata;
    if (Number.isFinite(video.duration) && video.duration > 0) facts.durationS = video.duration;
    if (video.videoWidth > 0 && video.videoHeight > 0) {
      facts.width = video.videoWidth;
      facts.height = video.videoHeight;
    }
    await firstFrame;
    facts.poster = await drawFrame(video);
  } catch {
    // Whatever was learnt stands; the server reads the file either way.
  } finally {
    video.removeAttribute("src");
    video.load();
    URL.revokeObjectURL(url);
  }
  return facts;
}

async function drawFrame(video: HTMLVideoElement): Promise<Blob | undefined> {
  const { videoWidth, videoHeight } = video;
  if (videoWidth === 0 || videoHeight === 0) return undefined;
  const scale = Math.min(1, POSTER_LONGEST_EDGE / Math.max(videoWidth, videoHeight));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(videoWidth * scale));
  canvas.height = Math.max(1, Math.round(videoHeight * scale));
  const context = canvas.getContext("2d");
  if (!context) return undefined;
  context.drawImage(video, 0, 0, canvas.width, canvas.height);
  return (
    (await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, "image/jpeg", POSTER_QUALITY))) ?? undefined
  );
}
