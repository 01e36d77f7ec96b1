// A small button that copies some text and says so for a moment.
import { copyText, element } from "../dom";
import { iconSvg } from "./icons";

const CONFIRM_MS = 1500;

export function copyButton(
  label: string,
  text: () => string,
  className = "icon-button small",
  copy: (text: string) => Promise<void> = copyText,
): HTMLButtonElement {
  const button = element("button", className);
  button.type = "button";
  const show = (copied: boolean) => {
    button.innerHTML = iconSvg(copied ? "check" : "copy");
    button.setAttribute("aria-label", copied ? "Copied" : label);
    button.title = copied ? "Copied" : label;
  };
  show(false);
  button.addEventListener("click", () => {
    void copy(text()).then(() => {
      show(true);
      setTimeout(() => show(false), CONFIRM_MS);
    });
  });
  return button;
}
