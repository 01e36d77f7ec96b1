import { describe, expect, it } from "vitest";
import { ACCEPT_ATTRIBUTE, FORMAT_NAMES, SERVER_TYPES, USE_A_SUPPORTED_FILE } from "./formats";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { needsReencode, unreadableImageMessage } from "./prepare";

describe("image formats", () => {
  it("names the five formats the server reads, in every form the page shows", () => {
    expect(FORMAT_NAMES).toBe("JPEG, PNG, WebP, GIF or BMP");
    expect(USE_A_SUPPORTED_FILE).toBe("Use a JPEG, PNG, WebP, GIF or BMP file.");
    expect(ACCEPT_ATTRIBUTE).toBe(
      "image/jpeg,.jpg,.jpeg,image/png,.png,image/webp,.webp,image/gif,.gif,image/bmp,.bmp," +
        "image/heic,.heic,image/heif,.heif,image/avif,.avif",
    );
  });

  it("sends every listed format unchanged", () => {
    expect(SERVER_TYPES).toEqual(["image/jpeg", "image/png", "image/webp", "image/gif", "image/bmp"]);
    for (const type of SERVER_TYPES) expect(needsReencode(type, 1000, 10, 10, DEFAULT_SERVER_LIMITS)).toBe(false);
  });
});

describe("a phone's photo formats", () => {
  it("are offered by the pickers and converted to JPEG, not sent as they are", () => {
    for (const type of ["image/heic", "image/heif", "image/avif"]) {
      expect(needsReencode(type, 1000, 10, 10, DEFAULT_SERVER_LIMITS)).toBe(true);
    }
  });

  it("are named when this browser cannot read them, HEIC with how an iPhone takes JPEG", () => {
    expect(unreadableImageMessage("IMG_0001.HEIC", "")).toBe(
      '"IMG_0001.HEIC" is a HEIC photo, which this browser cannot convert. Use a JPEG, PNG, WebP, GIF or BMP file.' +
        " An iPhone takes JPEG photos with Settings › Camera › Formats › Most Compatible.",
    );
    expect(unreadableImageMessage("photo", "image/heif")).toContain("is a HEIF photo");
    expect(unreadableImageMessage("a.avif", "image/avif")).toBe(
      '"a.avif" is an AVIF photo, which this browser cannot convert. Use a JPEG, PNG, WebP, GIF or BMP file.',
    );
    expect(unreadableImageMessage("notes.txt", "")).toBe(
      '"notes.txt" is not an image this browser can read. Use a JPEG, PNG, WebP, GIF or BMP file.',
    );
  });
});
