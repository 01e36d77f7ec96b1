// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { focusVersionStep, versionSwitcher, type VersionStep } from "./version_switcher";

const label = (node: Element | null) => node?.getAttribute("aria-label");

describe("the version switcher", () => {
  it("names the version shown, steps either way, and stops at the ends", () => {
    const steps: VersionStep[] = [];
    const group = versionSwitcher({ number: 2, count: 3 }, "answer", (step) => steps.push(step));
    expect(label(group)).toBe("Version 2 of 3 of this answer");
    expect(group.textContent).toBe("2 / 3");
    const [previous, next] = group.querySelectorAll("button");
    expect(label(previous)).toBe("Show the previous version of this answer");
    previous.click();
    next.click();
    expect(steps).toEqual([-1, 1]);

    const last = versionSwitcher({ number: 3, count: 3 }, "question", () => {});
    expect([...last.querySelectorAll("button")].map((button) => button.disabled)).toEqual([false, true]);
  });

  it("gives the focus back to the same step, or to the other where the end was reached", () => {
    const view = document.createElement("article");
    document.body.append(view);
    view.append(versionSwitcher({ number: 1, count: 2 }, "answer", () => {}));
    focusVersionStep(view, -1);
    expect(label(document.activeElement)).toBe("Show the next version of this answer");
    view.replaceChildren(versionSwitcher({ number: 2, count: 3 }, "answer", () => {}));
    focusVersionStep(view, -1);
    expect(label(document.activeElement)).toBe("Show the previous version of this answer");
  });
});
