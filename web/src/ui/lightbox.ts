// An image opened large: a modal dialog over the page, closed with Escape (the
// browser's dialog behaviour), its close button, or a click beside the image.
import { byId } from "../dom";

export class Lightbox {
  private readonly dialog = byId<HTMLDialogElement>("lightbox");
  private readonly image = byId<HTMLImageElement>("lightbox-image");
  private readonly caption = byId<HTMLElement>("lightbox-caption");

  constructor() {
    byId<HTMLButtonElement>("lightbox-close").addEventListener("click", () => this.dialog.close());
    // The dialog fills the window; a click on its empty area is a click beside the image.
    this.dialog.addEventListener("click", (event) => {
      if (event.target === this.dialog.querySelector(".lightbox-stage")) this.dialog.close();
    });
    this.dialog.addEventListener("close", () => this.image.removeAttribute("src"));
  }

  open(url: string, description: string): void {
    this.image.src = url;
    this.image.alt = description;
    this.caption.textContent = description;
    this.dialog.showModal();
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
