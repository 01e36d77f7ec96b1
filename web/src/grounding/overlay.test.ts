// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { GroundingView } from "./overlay";
import { parseGrounding } from "./parse";

const images = [
  { url: "blob:one", alt: "Image 1: cats.jpg" },
  { url: "blob:two", alt: "Image 2: dog.png" },
];

function view() {
  const v = new GroundingView(images, 1);
  v.update(
    parseGrounding(
      '[{"bbox_2d": [100, 20, 500, 400], "label": "cat"}, {"bbox_2d": [600, 500, 900, 1000], "label": "cat"}, ' +
        '{"bbox_2d": [0, 0, 1000, 1000], "label": "room"}, {"point_2d": [250, 750], "label": "cup"}]',
    ),
  );
  document.body.replaceChildren(v.element);
  return v;
}

function marks(v: GroundingView) {
  return [...v.element.querySelectorAll<HTMLElement>(".gbox, .gpoint")];
}

describe("GroundingView", () => {
  it("places boxes and points in percent of the image, labelled and colored per label", () => {
    const v = view();
    const [first, second, room, cup] = marks(v);
    expect([first.style.left, first.style.top, first.style.width, first.style.height]).toEqual([
      "10%",
      "2%",
      "40%",
      "38%",
    ]);
    expect(first.classList.contains("label-inside")).toBe(true);
    expect(second.classList.contains("label-inside")).toBe(false);
    expect(first.textContent).toBe("cat");
    expect(first.style.getPropertyValue("--mark")).toBe(second.style.getPropertyValue("--mark"));
    expect(room.style.getPropertyValue("--mark")).not.toBe(first.style.getPropertyValue("--mark"));
    expect(cup.className).toBe("gpoint");
    expect([cup.style.left, cup.style.top]).toEqual(["25%", "75%"]);
    const image = v.element.querySelector("img")!;
    expect(image.getAttribute("src")).toBe("blob:two");
    expect(image.alt).toBe("Image 2: dog.png, with 3 boxes and 1 point");
  });

  it("lists labels with counts; clicking one hides its boxes, the switch hides all", () => {
    const v = view();
    const legend = () => [...v.element.querySelectorAll<HTMLButtonElement>(".legend-entry")];
    expect(legend().map((e) => e.textContent)).toEqual(["cat ×2", "room", "cup"]);
    legend()[0].click();
    expect(marks(v).map((m) => m.hidden)).toEqual([true, true, false, false]);
    expect(legend()[0].getAttribute("aria-pressed")).toBe("false");
    expect(document.activeElement).toBe(legend()[0]);
    const toggle = v.element.querySelector<HTMLButtonElement>(".grounding-toggle")!;
    expect(toggle.textContent).toBe("Hide boxes");
    toggle.click();
    expect(v.element.querySelector<HTMLElement>(".grounding-layer")!.hidden).toBe(true);
    expect(toggle.textContent).toBe("Show boxes");
  });

  it("highlights a label's boxes while its legend entry is hovered or focused", () => {
    const v = view();
    v.element.querySelector<HTMLButtonElement>(".legend-entry")!.dispatchEvent(new Event("focus"));
    expect(marks(v).map((m) => m.classList.contains("is-active"))).toEqual([true, true, false, false]);
    expect(v.element.querySelector(".grounding-layer")!.classList.contains("has-active")).toBe(true);
  });

  it("switches the image the boxes are drawn on", () => {
    const v = view();
    const picker = v.element.querySelector("select")!;
    expect(picker.value).toBe("1");
    picker.value = "0";
    picker.dispatchEvent(new Event("change"));
    expect(v.element.querySelector("img")!.getAttribute("src")).toBe("blob:one");
  });
});
