// "‹ 2 / 3 ›" under a question or answer that has other versions: shows the one before
// or after it, with the branch that follows it.
import type { VersionPosition } from "../conversation_tree";
import { element } from "../dom";
import { iconSvg } from "./icons";

export type VersionStep = -1 | 1;

/** `what`: "question" or "answer", for the labels. */
export function versionSwitcher(
  position: VersionPosition,
  what: string,
  show: (step: VersionStep) => void,
): HTMLElement {
  const group = element("div", "version-switcher");
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", `Version ${position.number} of ${position.count} of this ${what}`);
  const button = (step: VersionStep, label: string) => {
    const node = element("button", "icon-button small version-step");
    node.type = "button";
    node.dataset.step = String(step);
    node.setAttribute("aria-label", label);
    node.title = label;
    node.innerHTML = iconSvg(step < 0 ? "previous" : "next");
    node.disabled = position.number + step < 1 || position.number + step > position.count;
    node.addEventListener("click", () => show(step));
    return node;
  };
  const figures = element("span", "version-figures", `${position.number} / ${position.count}`);
  figures.setAttribute("aria-hidden", "true");
  group.append(
    button(-1, `Show the previous version of this ${what}`),
    figures,
    button(1, `Show the next version of this ${what}`),
  );
  return group;
}

/** Puts the focus back on the switcher's `step` button after the view was drawn again
 * (or on the other one where that end was reached). */
export function focusVersionStep(root: ParentNode, step: VersionStep): void {
  const steps = [...root.querySelectorAll<HTMLButtonElement>(".version-switcher .version-step")];
  const wanted = steps.find((button) => button.dataset.step === String(step) && !button.disabled);
  (wanted ?? steps.find((button) => !button.disabled))?.focus();
}
