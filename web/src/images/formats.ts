// The image formats qvl serve decodes itself: the one list behind the file pickers'
// accept attribute, the words of every "use a ... file" message, and the choice of
// which files are sent unchanged.

export interface ImageFormat {
  name: string;
  mimeType: string;
  extensions: string[];
}

export const SERVER_FORMATS: readonly ImageFormat[] = [
  { name: "JPEG", mimeType: "image/jpeg", extensions: [".jpg", ".jpeg"] },
  { name: "PNG", mimeType: "image/png", extensions: [".png"] },
  { name: "WebP", mimeType: "image/webp", extensions: [".webp"] },
  { name: "GIF", mimeType: "image/gif", extensions: [".gif"] },
  { name: "BMP", mimeType: "image/bmp", extensions: [".bmp"] },
];

export const SERVER_TYPES: readonly string[] = SERVER_FORMATS.map((format) => format.mimeType);

// Formats phones save photos in that the server does not read. The pickers offer them
// all the same: a browser that decodes one (Safari HEIC, most browsers AVIF) lets the
// page send it as JPEG (prepare.ts); one that cannot gets words naming the format.
export const CONVERTED_FORMATS: readonly ImageFormat[] = [
  { name: "HEIC", mimeType: "image/heic", extensions: [".heic"] },
  { name: "HEIF", mimeType: "image/heif", extensions: [".heif"] },
  { name: "AVIF", mimeType: "image/avif", extensions: [".avif"] },
];

/** For `<input type="file" accept>`: types and extensions, since some pickers only match one. */
export const ACCEPT_ATTRIBUTE = [...SERVER_FORMATS, ...CONVERTED_FORMATS]
  .flatMap((format) => [format.mimeType, ...format.extensions])
  .join(",");

/** The converted format of a file, by its type or else its name's extension. */
export function convertedFormatOf(type: string, name: string): ImageFormat | undefined {
  const lower = name.toLowerCase();
  return CONVERTED_FORMATS.find(
    (format) => format.mimeType === type || format.extensions.some((extension) => lower.endsWith(extension)),
  );
}

/** "JPEG, PNG, WebP, GIF or BMP" */
export const FORMAT_NAMES = listWithOr(SERVER_FORMATS.map((format) => format.name));

/** The sentence that ends every message about a file the page cannot use. */
export const USE_A_SUPPORTED_FILE = `Use a ${FORMAT_NAMES} file.`;

function listWithOr(words: string[]): string {
  return words.length < 2 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}
