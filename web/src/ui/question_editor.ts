// Editing the latest question in place: its text in a box, sent again with Enter or the
// Send button (the same keys as the composer), left alone with Escape or Cancel.
import { element } from "../dom";

export interface QuestionEditorHandlers {
  /** Returns false when the edit cannot be sent now; the editor then stays open. */
  send(text: string): boolean;
  close(): void;
  /** A question with images may be sent without text. */
  allowEmpty: boolean;
}

export function questionEditor(text: string, handlers: QuestionEditorHandlers): HTMLFormElement {
  const form = element("form", "question-editor");
  form.setAttribute("aria-label", "Edit the question");
  const box = element("textarea", "question-editor-text");
  box.value = text;
  box.rows = Math.min(8, Math.max(2, text.split("\n").length));
  box.setAttribute("aria-label", "Your question, edited");
  box.setAttribute("enterkeyhint", "send");
  const cancel = element("button", "text-button", "Cancel");
  cancel.type = "button";
  const send = element("button", "text-button primary", "Send");
  send.type = "submit";
  const actions = element("div", "question-editor-actions");
  actions.append(cancel, send);
  form.append(box, actions);

  const submit = () => {
    const edited = box.value.trim();
    if (!edited && !handlers.allowEmpty) {
      box.focus();
      return;
    }
    if (handlers.send(edited)) handlers.close();
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  cancel.addEventListener("click", () => handlers.close());
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    } else if (event.key === "Escape") {
      event.preventDefault();
      handlers.close();
    }
  });
  requestAnimationFrame(() => {
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  });
  return form;
}
