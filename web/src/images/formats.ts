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

/** For `<input type="file" accept>`: types and extensions, since some pickers only match one. */
export const ACCEPT_ATTRIBUTE = SERVER_FORMATS.flatMap((format) => [format.mimeType, ...format.extensions]).join(",");

/** "JPEG, PNG, WebP, GIF or BMP" */
export const FORMAT_NAMES = listWithOr(SERVER_FORMATS.map((format) => format.name));

/** The sentence that ends every message about a file the page cannot use. */
export const USE_A_SUPPORTED_FILE = `Use a ${FORMAT_NAMES} file.`;

function listWithOr(words: string[]): string {
  return words.length < 2 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}
