import { describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { prepareVideo, VideoError, videoTypeOfFile } from "./prepare";

const MP4_HEAD = Uint8Array.from([0, 0, 0, 0x20, ..."ftypisom".split("").map((c) => c.charCodeAt(0))]);

describe("videoTypeOfFile", () => {
  it("trusts a file's type, then its name, then its first bytes", async () => {
    expect(await videoTypeOfFile(new File(["x"], "a.webm", { type: "video/webm" }))).toBe("video/webm");
    expect(await videoTypeOfFile(new File(["x"], "a.mkv"))).toBe("video/x-matroska");
    expect(await videoTypeOfFile(new File([MP4_HEAD], "pasted"))).toBe("video/mp4");
    expect(await videoTypeOfFile(new File(["not a video"], "pasted"))).toBeUndefined();
    // A typed image is an image, whatever its bytes.
    expect(await videoTypeOfFile(new File([MP4_HEAD], "a.png", { type: "image/png" }))).toBeUndefined();
  });
});

describe("prepareVideo", () => {
  it("refuses an empty file before reading it", async () => {
    const error = await prepareVideo(
      new File([], "empty.mp4", { type: "video/mp4" }),
      "video/mp4",
      DEFAULT_SERVER_LIMITS,
    ).catch((e) => e);
    expect(error).toBeInstanceOf(VideoError);
    expect(error.message).toBe('"empty.mp4" is empty.');
  });

  it("refuses a file over the server's limit before reading it", async () => {
    const limits = { ...DEFAULT_SERVER_LIMITS, videoBytes: 1024 * 1024 };
    const file = new File([new Uint8Array(2 * 1024 * 1024)], "big.mp4", { type: "video/mp4" });
    const error = await prepareVideo(file, "video/mp4", limits).catch((e) => e);
    expect(error).toBeInstanceOf(VideoError);
    expect(error.message).toBe(
      '"big.mp4" is 2.0 MB, over the server\'s limit of 1.0 MB per video. Trim or compress it first.',
    );
  });
});
