// A video's poster, as the composer and the messages show it.
import { element } from "../dom";
import { formatClipDuration } from "../videos/formats";
import { iconSvg } from "./icons";

/** A video's poster (or a plain frame where the browser could not draw one) with its length. */
export function videoThumb(video: { posterUrl?: string; durationS?: number }, description: string): HTMLElement {
  const frame = element("div", "video-thumb");
  frame.setAttribute("role", "img");
  frame.setAttribute("aria-label", description);
  if (video.posterUrl) {
    const poster = element("img", "video-poster");
    poster.src = video.posterUrl;
    poster.alt = "";
    frame.append(poster);
  } else {
    frame.insertAdjacentHTML("beforeend", iconSvg("video"));
  }
  if (video.durationS !== undefined)
    frame.append(element("span", "video-duration", formatClipDuration(video.durationS)));
  return frame;
}
