// An image opened large, or a video played: a modal dialog over the page, closed with
// Escape (the browser's dialog behaviour), its close button, or a click beside it.
import { byId } from "../dom";
import { keepFocusInside } from "./focus_trap";

export class Lightbox {
  private readonly dialog = byId<HTMLDialogElement>("lightbox");
  private readonly image = byId<HTMLImageElement>("lightbox-image");
  private readonly video = byId<HTMLVideoElement>("lightbox-video");
  private readonly caption = byId<HTMLElement>("lightbox-caption");
  private readonly close = byId<HTMLButtonElement>("lightbox-close");

  constructor() {
    this.close.addEventListener("click", () => this.dialog.close());
    keepFocusInside(this.dialog);
    // The dialog fills the window; a click on its empty area is a click beside the image.
    this.dialog.addEventListener("click", (event) => {
      if (event.target === this.dialog.querySelector(".lightbox-stage")) this.dialog.close();
    });
    this.dialog.addEventListener("close", () => {
      this.image.removeAttribute("src");
      this.video.pause();
      this.video.removeAttribute("src");
      this.video.load();
    });
  }

  open(url: string, description: string): void {
    this.image.hidden = false;
    this.video.hidden = true;
    this.image.src = url;
    this.image.alt = description;
    this.show(description, "Close the image");
  }

  /** Plays a video (browsers play fewer formats than the server reads; theirs shows why). */
  openVideo(url: string, description: string): void {
    this.image.hidden = true;
    this.video.hidden = false;
    this.video.src = url;
    this.video.setAttribute("aria-label", description);
    this.show(description, "Close the video");
    void this.video.play().catch(() => undefined);
  }

  private show(description: string, closeLabel: string): void {
    this.caption.textContent = description;
    this.close.setAttribute("aria-label", closeLabel);
    this.dialog.showModal();
    // Left to itself, Chromium focuses the first control in the dialog: the hidden
    // <video> when an image is shown. The close button is visible in both cases.
    this.close.focus();
  }
}

/** Wraps a thumbnail in a button that opens it large. */
export function openableImage(image: HTMLImageElement, label: string, open: () => void): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "image-open";
  button.setAttribute("aria-label", label);
  button.title = "Show large";
  button.append(image);
  button.addEventListener("click", () => {
    if (image.src) open();
  });
  return button;
}
