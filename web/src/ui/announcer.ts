// What a screen reader says of an answer being written. The answer itself is no live
// region: it is drawn again many times a second, and each drawing would be read out
// anew. Instead each finished block (paragraph, list, code block, table) is read once
// the next one has begun, and the rest when the answer ends, politely (after whatever
// the person is hearing or doing), through one hidden log on the page.
import { byId, element } from "../dom";

// Older lines only make the hidden log longer; screen readers have read them.
const KEPT_LINES = 20;

export function announce(text: string): void {
  const line = text.replace(/\s+/g, " ").trim();
  if (!line) return;
  const log = byId("announcer");
  log.append(element("p", "", line));
  while (log.childElementCount > KEPT_LINES) log.firstElementChild!.remove();
}

/** Reads out the blocks of one answer's rendered body as they are finished. */
export class BlockAnnouncer {
  /** `spoken`: the blocks already read (a continued answer's before the one it was cut in). */
  constructor(
    private readonly say: (text: string) => void = announce,
    private spoken = 0,
  ) {}

  /** After each render: the blocks before the last, or with `ended` all of them. */
  update(body: HTMLElement, ended: boolean): void {
    const blocks = [...body.children];
    const finished = ended ? blocks.length : blocks.length - 1;
    for (; this.spoken < finished; this.spoken++) this.say(blocks[this.spoken].textContent ?? "");
  }
}
