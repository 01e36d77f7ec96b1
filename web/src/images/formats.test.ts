import { describe, expect, it } from "vitest";
import { ACCEPT_ATTRIBUTE, FORMAT_NAMES, SERVER_TYPES, USE_A_SUPPORTED_FILE } from "./formats";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { needsReencode } from "./prepare";

describe("image formats", () => {
  it("names the five formats the server reads, in every form the page shows", () => {
    expect(FORMAT_NAMES).toBe("JPEG, PNG, WebP, GIF or BMP");
    expect(USE_A_SUPPORTED_FILE).toBe("Use a JPEG, PNG, WebP, GIF or BMP file.");
    expect(ACCEPT_ATTRIBUTE).toBe(
      "image/jpeg,.jpg,.jpeg,image/png,.png,image/webp,.webp,image/gif,.gif,image/bmp,.bmp",
    );
  });

  it("sends every listed format unchanged", () => {
    expect(SERVER_TYPES).toEqual(["image/jpeg", "image/png", "image/webp", "image/gif", "image/bmp"]);
    for (const type of SERVER_TYPES) expect(needsReencode(type, 1000, 10, 10, DEFAULT_SERVER_LIMITS)).toBe(false);
  });
});
