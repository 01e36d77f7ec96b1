import { describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import {
  formatBytes,
  formatClipDuration,
  sniffVideoType,
  VIDEO_ACCEPT_ATTRIBUTE,
  VIDEO_FORMAT_NAMES,
  videoLengthProblem,
  videoSizeProblem,
  videoTypeOf,
} from "./formats";

const MAX_VIDEO_BYTES = DEFAULT_SERVER_LIMITS.videoBytes;

function bytes(...pieces: (string | number[])[]): Uint8Array {
  return Uint8Array.from(pieces.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
}

describe("video formats", () => {
  it("names the server's formats and accepts them by type and extension", () => {
    expect(VIDEO_FORMAT_NAMES).toBe("MP4, MOV, WebM, Matroska, AVI, MPEG-TS, FLV or Ogg");
    const accept = VIDEO_ACCEPT_ATTRIBUTE.split(",");
    for (const entry of ["video/mp4", ".mp4", "video/webm", "video/quicktime", ".mov", "video/x-matroska", ".mkv"]) {
      expect(accept).toContain(entry);
    }
  });

  it("tells the type a file is sent as from its type, else from its name", () => {
    expect(videoTypeOf("video/mp4", "clip.mp4")).toBe("video/mp4");
    expect(videoTypeOf("VIDEO/QuickTime", "a.mov")).toBe("video/quicktime");
    expect(videoTypeOf("video/x-m4v", "a.m4v")).toBe("video/mp4");
    expect(videoTypeOf("video/avi", "a.avi")).toBe("video/x-msvideo");
    expect(videoTypeOf("video/3gpp", "a.3gp")).toBe("video/3gpp");
    expect(videoTypeOf("", "holiday.MKV")).toBe("video/x-matroska");
    expect(videoTypeOf("application/octet-stream", "a.webm")).toBe("video/webm");
    expect(videoTypeOf("", "photo.jpg")).toBeUndefined();
    expect(videoTypeOf("", "noname")).toBeUndefined();
    expect(videoTypeOf("image/png", "strange.mp4")).toBeUndefined();
  });

  it("recognises each container from its first bytes", () => {
    expect(sniffVideoType(bytes([0, 0, 0, 0x20], "ftypisom"))).toBe("video/mp4");
    expect(sniffVideoType(bytes([0, 0, 0, 0x14], "ftypqt  "))).toBe("video/quicktime");
    expect(sniffVideoType(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84], "webm"))).toBe("video/webm");
    expect(sniffVideoType(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x88], "matroska"))).toBe(
      "video/x-matroska",
    );
    expect(sniffVideoType(bytes("RIFF", [1, 2, 3, 4], "AVI LIST"))).toBe("video/x-msvideo");
    expect(sniffVideoType(bytes("RIFF", [1, 2, 3, 4], "WEBPVP8 "))).toBeUndefined();
    expect(sniffVideoType(bytes("FLV", [1]))).toBe("video/x-flv");
    expect(sniffVideoType(bytes("OggS", [0]))).toBe("video/ogg");
    const ts = new Uint8Array(377);
    ts[0] = ts[188] = ts[376] = 0x47;
    expect(sniffVideoType(ts)).toBe("video/mp2t");
    ts[188] = 0;
    expect(sniffVideoType(ts)).toBeUndefined();
    expect(sniffVideoType(bytes([0xff, 0xd8, 0xff, 0xe0]))).toBeUndefined();
    expect(sniffVideoType(new Uint8Array())).toBeUndefined();
  });

  it("refuses empty files and files over the server's limit, naming them", () => {
    expect(MAX_VIDEO_BYTES).toBe(256 * 1024 * 1024);
    expect(videoSizeProblem("clip.mp4", 80_305, MAX_VIDEO_BYTES)).toBeUndefined();
    expect(videoSizeProblem("clip.mp4", MAX_VIDEO_BYTES, MAX_VIDEO_BYTES)).toBeUndefined();
    expect(videoSizeProblem("big.mov", MAX_VIDEO_BYTES + 1, MAX_VIDEO_BYTES)).toBe(
      '"big.mov" is 256 MB, over the server\'s limit of 256 MB per video. Trim or compress it first.',
    );
    expect(videoSizeProblem("big.mov", 300 * 1024 * 1024, MAX_VIDEO_BYTES)).toMatch(/^"big.mov" is 300 MB, over/);
    expect(videoSizeProblem("a.mp4", 2_000_000, 1_000_000)).toMatch(/is 1.9 MB, over the server's limit of 977 KB/);
    expect(videoSizeProblem("empty.mp4", 0, MAX_VIDEO_BYTES)).toBe('"empty.mp4" is empty.');
  });

  it("refuses clips longer than the server's limit, naming them", () => {
    expect(videoLengthProblem("clip.mp4", 2, 600)).toBeUndefined();
    expect(videoLengthProblem("clip.mp4", 600, 600)).toBeUndefined();
    expect(videoLengthProblem("film.mkv", 5400, 600)).toBe(
      '"film.mkv" is 1:30:00 long, over the server\'s limit of 10:00 per video. Trim it first.',
    );
  });

  it("writes sizes and clip lengths as people read them", () => {
    expect(formatBytes(512)).toBe("512 bytes");
    expect(formatBytes(80_305)).toBe("78 KB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5.0 MB");
    expect(formatBytes(40 * 1024 * 1024)).toBe("40 MB");
    expect(formatBytes(3 * 1024 * 1024 * 1024)).toBe("3.0 GB");
    expect(formatClipDuration(2)).toBe("0:02");
    expect(formatClipDuration(0.4)).toBe("0:00");
    expect(formatClipDuration(65.6)).toBe("1:06");
    expect(formatClipDuration(3 * 3600 + 5 * 60 + 9)).toBe("3:05:09");
  });
});
