// Copy buttons on the code blocks of a rendered answer. They are added to the DOM
// after the Markdown was sanitized, so the model's own HTML never gets a button.
import { copyText, element } from "../dom";
import { copyButton } from "./copy_button";

export function addCodeCopyButtons(root: HTMLElement, copy: (text: string) => Promise<void> = copyText): void {
  for (const pre of root.querySelectorAll("pre")) {
    if (pre.parentElement?.classList.contains("code-block")) continue;
    const block = element("div", "code-block");
    pre.replaceWith(block);
    const code = pre.querySelector("code") ?? pre;
    block.append(
      pre,
      copyButton("Copy code", () => code.textContent ?? "", "icon-button small code-copy", copy),
    );
  }
}
