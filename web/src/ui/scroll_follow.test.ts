// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { ScrollFollower } from "./scroll_follow";

// jsdom lays nothing out: the scroller's sizes are set by hand, and resizes reported by hand.
let resized: () => void;

class FakeResizeObserver {
  constructor(callback: () => void) {
    resized = callback;
  }
  observe(): void {}
  unobserve(): void {}
  disconnect(): void {}
}

function scroller(): HTMLElement & { contentHeight: number } {
  const box = document.createElement("main") as HTMLElement & { contentHeight: number };
  box.contentHeight = 1000;
  let top = 0;
  Object.defineProperties(box, {
    clientHeight: { get: () => 400 },
    scrollHeight: { get: () => box.contentHeight },
    scrollTop: {
      get: () => top,
      set: (value: number) => (top = Math.max(0, Math.min(value, box.contentHeight - 400))),
    },
  });
  return box;
}

function scrollTo(box: HTMLElement, top: number): void {
  box.scrollTop = top;
  box.dispatchEvent(new Event("scroll"));
}

describe("following the end of the conversation", () => {
  let box: ReturnType<typeof scroller>;
  let button: HTMLButtonElement;
  let prompt: HTMLTextAreaElement;
  let follower: ScrollFollower;

  beforeEach(() => {
    globalThis.ResizeObserver = FakeResizeObserver as unknown as typeof ResizeObserver;
    box = scroller();
    button = document.createElement("button");
    prompt = document.createElement("textarea");
    document.body.replaceChildren(box, button, prompt);
    follower = new ScrollFollower(box, document.createElement("div"), button, prompt);
    follower.follow();
  });

  it("follows a growing answer and offers no button while it does", () => {
    expect(box.scrollTop).toBe(600);
    box.contentHeight = 1500;
    resized();
    expect(box.scrollTop).toBe(1100);
    expect(button.hidden).toBe(true);
  });

  it("stops following at the first move up, shows the button, and jumps back to follow again", () => {
    scrollTo(box, 590);
    expect(button.hidden).toBe(false);
    box.contentHeight = 1500;
    resized();
    expect(box.scrollTop).toBe(590);
    expect(button.hidden).toBe(false);

    button.click();
    expect(box.scrollTop).toBe(1100);
    expect(button.hidden).toBe(true);
    box.contentHeight = 1700;
    resized();
    expect(box.scrollTop).toBe(1300);
  });

  it("offers no button while the last message is seen to its end", () => {
    const content = document.createElement("div");
    content.style.paddingBottom = "18px";
    follower = new ScrollFollower(box, content, button, prompt);
    follower.follow();
    // Only the space under the last message is out of view.
    scrollTo(box, 582);
    expect(button.hidden).toBe(true);
    box.contentHeight = 1100;
    resized();
    expect(box.scrollTop).toBe(582);
    expect(button.hidden).toBe(false);
    scrollTo(box, 681);
    expect(button.hidden).toBe(true);
    scrollTo(box, 670);
    expect(button.hidden).toBe(false);
  });

  it("follows again once scrolled back near the end", () => {
    scrollTo(box, 100);
    expect(button.hidden).toBe(false);
    scrollTo(box, 560);
    expect(button.hidden).toBe(true);
    box.contentHeight = 1200;
    resized();
    expect(box.scrollTop).toBe(800);
  });

  it("keeps following when the content shrinks under the view", () => {
    box.contentHeight = 800;
    scrollTo(box, 400);
    expect(button.hidden).toBe(true);
  });

  it("holds still while something unfolded is read", () => {
    follower.hold();
    box.contentHeight = 3000;
    resized();
    expect(box.scrollTop).toBe(600);
    expect(button.hidden).toBe(false);
  });
});
