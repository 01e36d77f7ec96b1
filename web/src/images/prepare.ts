// Gets a picked, pasted or dropped file ready to send. Files in a format the server
// reads (formats.ts) and of reasonable size go as they are, so the server sees the
// original pixels and applies EXIF rotation itself. Anything else the browser can
// decode (AVIF, HEIC on Safari, huge photos, files over the server's limits) is redrawn
// and sent as JPEG; one still over the server's byte limit then is refused.
import type { ServerLimits } from "../api/server_limits";
import { formatBytes } from "../videos/formats";
import { convertedFormatOf, SERVER_TYPES, USE_A_SUPPORTED_FILE } from "./formats";

export interface PreparedImage {
  blob: Blob;
  name: string;
  width: number;
  height: number;
}

// The model never uses more than 16.7 megapixels (its preprocessor's max_pixels);
// larger files only cost upload time and browser storage. The page's own sizes: a
// server's lower limits win.
export const MAX_PIXELS = 4096 * 4096;
export const MAX_BYTES = 8 * 1024 * 1024;
const JPEG_QUALITY = 0.9;

export class ImageError extends Error {}

/** The largest file and picture the page sends unchanged to a server with `limits`. */
export function sendableSize(limits: ServerLimits): { bytes: number; pixels: number } {
  return { bytes: Math.min(MAX_BYTES, limits.imageBytes), pixels: Math.min(MAX_PIXELS, limits.imagePixels) };
}

export function needsReencode(
  type: string,
  bytes: number,
  width: number,
  height: number,
  limits: ServerLimits,
): boolean {
  const sendable = sendableSize(limits);
  return !SERVER_TYPES.includes(type) || bytes > sendable.bytes || width * height > sendable.pixels;
}

/** Why an image of `bytes` cannot be sent to a server that takes `maxBytes`, or undefined when it can. */
export function imageSizeProblem(name: string, bytes: number, maxBytes: number): string | undefined {
  if (bytes <= maxBytes) return undefined;
  return `"${name}" is ${formatBytes(bytes)} even as JPEG, over the server's limit of ${formatBytes(maxBytes)} per image. Use a smaller picture.`;
}

/** The largest size with the same aspect ratio that stays within MAX_PIXELS. */
export function fitWithin(width: number, height: number, maxPixels = MAX_PIXELS): { width: number; height: number } {
  if (width * height <= maxPixels) return { width, height };
  const scale = Math.sqrt(maxPixels / (width * height));
  // A side rounded up to one pixel must be paid for by the other side.
  const scaledWidth = Math.max(1, Math.floor(width * scale));
  const scaledHeight = Math.max(1, Math.min(Math.floor(height * scale), Math.floor(maxPixels / scaledWidth)));
  return { width: Math.min(scaledWidth, Math.floor(maxPixels / scaledHeight)), height: scaledHeight };
}

/** Why the server's preprocessor would refuse a picture of this size, or undefined. */
export function imageShapeProblem(
  name: string,
  width: number,
  height: number,
  limits: ServerLimits,
): string | undefined {
  const size = `"${name}" is ${width} x ${height} pixels`;
  if (Math.min(width, height) < limits.imageMinSide) {
    return `${size}: the model needs at least ${limits.imageMinSide} pixels on each side. Use a larger picture.`;
  }
  if (Math.max(width, height) > limits.imageMaxAspectRatio * Math.min(width, height)) {
    return `${size}: for the model, the longer side may be at most ${limits.imageMaxAspectRatio} times the shorter one. Crop it.`;
  }
  return undefined;
}

export function isImageFile(file: File): boolean {
  // Files dropped from some file managers arrive without a type; let the decoder judge.
  return file.type === "" || file.type.startsWith("image/");
}

/** Why a file this browser could not decode is refused: its format named when it is a
 * phone's photo format. */
export function unreadableImageMessage(name: string, type: string): string {
  const format = convertedFormatOf(type, name);
  if (!format) return `"${name}" is not an image this browser can read. ${USE_A_SUPPORTED_FILE}`;
  const iphone =
    format.name === "AVIF" ? "" : " An iPhone takes JPEG photos with Settings › Camera › Formats › Most Compatible.";
  const article = /^[AEIOU]/.test(format.name) ? "an" : "a";
  return `"${name}" is ${article} ${format.name} photo, which this browser cannot convert. ${USE_A_SUPPORTED_FILE}${iphone}`;
}

// createImageBitmap takes no SVG in Chromium, which an <img> draws: the element decodes
// what createImageBitmap refuses, and gives a bitmap of its intrinsic size.
async function decodeImage(file: File, name: string): Promise<ImageBitmap> {
  try {
    return await createImageBitmap(file);
  } catch {
    // Tried through an <img> below.
  }
  let url = "";
  try {
    url = URL.createObjectURL(file);
    const element = new Image();
    element.src = url;
    await element.decode();
    if (element.naturalWidth > 0 && element.naturalHeight > 0) return await createImageBitmap(element);
  } catch {
    // Not an image at all, or one too large for this browser to decode.
  } finally {
    if (url) URL.revokeObjectURL(url);
  }
  throw new ImageError(unreadableImageMessage(name, file.type));
}

export async function prepareImage(file: File, limits: ServerLimits): Promise<PreparedImage> {
  const name = file.name || "pasted image";
  const bitmap = await decodeImage(file, name);
  try {
    const { width, height } = bitmap;
    const shape = imageShapeProblem(name, width, height, limits);
    if (shape) throw new ImageError(shape);
    if (!needsReencode(file.type, file.size, width, height, limits)) return { blob: file, name, width, height };
    const size = fitWithin(width, height, sendableSize(limits).pixels);
    const canvas = document.createElement("canvas");
    canvas.width = size.width;
    canvas.height = size.height;
    const context = canvas.getContext("2d");
    if (!context) throw new ImageError(`"${name}" could not be converted: the browser has no canvas.`);
    // JPEG has no transparency: put transparent pixels on white, as viewers show them.
    context.fillStyle = "#ffffff";
    context.fillRect(0, 0, size.width, size.height);
    context.drawImage(bitmap, 0, 0, size.width, size.height);
    const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, "image/jpeg", JPEG_QUALITY));
    if (!blob) throw new ImageError(`"${name}" could not be converted to JPEG.`);
    const problem = imageSizeProblem(name, blob.size, limits.imageBytes);
    if (problem) throw new ImageError(problem);
    return { blob, name, ...size };
  } finally {
    bitmap.close();
  }
}

export function blobToDataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("could not read the image"));
    reader.readAsDataURL(blob);
  });
}
