// Draws grounding results over the image they refer to: boxes and points positioned
// in percent of the image (the model's 0..1000 coordinates), one color per label, a
// legend whose entries highlight (hover/focus) or hide (click) their label, a switch
// for all boxes, and a choice of image when the conversation has several.
import { element } from "../dom";
import { labelColors, type LabelColor } from "./colors";
import { COORDINATE_SCALE, type Grounding } from "./parse";

export interface OverlayImage {
  url: string;
  alt: string;
}

const PERCENT = 100 / COORDINATE_SCALE;
// Labels of boxes this close to the top edge go inside the box, not above it.
const LABEL_INSIDE_BELOW = 60;

function labelName(label: string): string {
  return label || "unlabeled";
}

export class GroundingView {
  readonly element = element("figure", "grounding");
  private readonly image = element("img", "grounding-image");
  private readonly layer = element("div", "grounding-layer");
  private readonly legend = element("div", "grounding-legend");
  private readonly toggle = element("button", "chip grounding-toggle");
  private readonly picker = element("select", "grounding-picker");
  private items: Grounding[] = [];
  private hidden = new Set<string>();
  private showAll = true;
  private imageAlt = "";

  constructor(
    private readonly images: OverlayImage[],
    initialImage: number,
  ) {
    const stage = element("div", "grounding-stage");
    this.image.decoding = "async";
    stage.append(this.image, this.layer);
    const caption = element("figcaption", "grounding-caption");
    this.toggle.type = "button";
    this.toggle.addEventListener("click", () => {
      this.showAll = !this.showAll;
      this.render();
    });
    caption.append(this.toggle);
    if (images.length > 1) {
      this.picker.setAttribute("aria-label", "Image the boxes are drawn on");
      images.forEach((_, i) => this.picker.append(new Option(`Image ${i + 1}`, String(i))));
      this.picker.addEventListener("change", () => this.showImage(Number(this.picker.value)));
      caption.append(this.picker);
    }
    caption.append(this.legend);
    this.element.append(stage, caption);
    this.showImage(Math.min(Math.max(initialImage, 0), images.length - 1));
  }

  /** Replaces the drawn items (called again while an answer streams in). */
  update(items: Grounding[]): void {
    if (JSON.stringify(items) === JSON.stringify(this.items)) return;
    this.items = items;
    this.render();
  }

  private showImage(index: number): void {
    const image = this.images[index];
    this.picker.value = String(index);
    this.image.src = image.url;
    this.imageAlt = image.alt;
    this.image.alt = `${this.imageAlt}, with ${this.describeCount()}`;
  }

  private describeCount(): string {
    const boxes = this.items.filter((item) => item.kind === "box").length;
    const points = this.items.length - boxes;
    const parts = [];
    if (boxes) parts.push(`${boxes} box${boxes === 1 ? "" : "es"}`);
    if (points) parts.push(`${points} point${points === 1 ? "" : "s"}`);
    return parts.join(" and ") || "no boxes";
  }

  private render(): void {
    const colors = labelColors(this.items.map((item) => item.label));
    this.layer.replaceChildren(...this.items.map((item, i) => this.drawItem(item, i, colors.get(item.label)!)));
    this.layer.hidden = !this.showAll;
    this.toggle.textContent = this.showAll ? "Hide boxes" : "Show boxes";
    this.toggle.setAttribute("aria-pressed", String(!this.showAll));
    this.legend.replaceChildren(...[...colors].map(([label, color]) => this.legendEntry(label, color)));
    this.image.alt = `${this.imageAlt}, with ${this.describeCount()}`;
  }

  private drawItem(item: Grounding, index: number, color: LabelColor): HTMLElement {
    const mark = element("div", item.kind === "box" ? "gbox" : "gpoint");
    mark.dataset.label = item.label;
    mark.dataset.index = String(index);
    mark.style.setProperty("--mark", color.fill);
    mark.style.setProperty("--mark-text", color.text);
    if (item.kind === "box") {
      mark.style.left = `${item.x1 * PERCENT}%`;
      mark.style.top = `${item.y1 * PERCENT}%`;
      mark.style.width = `${(item.x2 - item.x1) * PERCENT}%`;
      mark.style.height = `${(item.y2 - item.y1) * PERCENT}%`;
      if (item.y1 < LABEL_INSIDE_BELOW) mark.classList.add("label-inside");
    } else {
      mark.style.left = `${item.x * PERCENT}%`;
      mark.style.top = `${item.y * PERCENT}%`;
    }
    mark.hidden = this.hidden.has(item.label);
    if (item.label) mark.append(element("span", "gmark-label", item.label));
    mark.addEventListener("pointerenter", () => this.highlight((m) => m === mark));
    mark.addEventListener("pointerleave", () => this.highlight(null));
    return mark;
  }

  private legendEntry(label: string, color: LabelColor): HTMLElement {
    const count = this.items.filter((item) => item.label === label).length;
    const entry = element("button", "chip legend-entry");
    entry.type = "button";
    entry.dataset.label = label;
    const swatch = element("span", "legend-swatch");
    swatch.style.background = color.fill;
    entry.append(swatch, `${labelName(label)}${count > 1 ? ` ×${count}` : ""}`);
    entry.setAttribute("aria-pressed", String(!this.hidden.has(label)));
    entry.title = this.hidden.has(label) ? "Show these boxes" : "Hide these boxes";
    const highlight = () => this.highlight((mark) => mark.dataset.label === label);
    const clear = () => this.highlight(null);
    entry.addEventListener("pointerenter", highlight);
    entry.addEventListener("pointerleave", clear);
    entry.addEventListener("focus", highlight);
    entry.addEventListener("blur", clear);
    entry.addEventListener("click", () => {
      if (this.hidden.has(label)) this.hidden.delete(label);
      else this.hidden.add(label);
      this.render();
      // The legend was rebuilt: keep keyboard focus on this label's entry.
      const entries = [...this.legend.children] as HTMLElement[];
      entries.find((e) => e.dataset.label === label)?.focus();
    });
    return entry;
  }

  private highlight(match: ((mark: HTMLElement) => boolean) | null): void {
    this.layer.classList.toggle("has-active", match !== null);
    for (const mark of this.layer.children as HTMLCollectionOf<HTMLElement>) {
      mark.classList.toggle("is-active", match !== null && match(mark));
    }
  }
}
