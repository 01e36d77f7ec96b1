// Incremental parser for text/event-stream bodies (the WHATWG "server-sent events"
// rules): bytes arrive in arbitrary pieces, events end at a blank line, and a "\r\n"
// may be split across two pieces.

export interface SseEvent {
  event: string;
  data: string;
}

export class SseParser {
  private buffer = "";
  private dataLines: string[] = [];
  private eventName = "";

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const end = this.lineEnd();
      if (end === null) break;
      const line = this.buffer.slice(0, end.index);
      this.buffer = this.buffer.slice(end.index + end.length);
      const event = this.takeLine(line);
      if (event) events.push(event);
    }
    return events;
  }

  /** The stream ended: a last event without its blank line still counts. */
  finish(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer.length > 0) {
      const event = this.takeLine(this.buffer.replace(/\r$/, ""));
      this.buffer = "";
      if (event) events.push(event);
    }
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private lineEnd(): { index: number; length: number } | null {
    const match = /\r\n|\r|\n/.exec(this.buffer);
    if (!match) return null;
    // A lone "\r" at the very end may be the first half of "\r\n".
    if (match[0] === "\r" && match.index === this.buffer.length - 1) return null;
    return { index: match.index, length: match[0].length };
  }

  private takeLine(line: string): SseEvent | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.dataLines.push(value);
    else if (field === "event") this.eventName = value;
    return null;
  }

  private dispatch(): SseEvent | null {
    if (this.dataLines.length === 0) {
      this.eventName = "";
      return null;
    }
    const event = { event: this.eventName || "message", data: this.dataLines.join("\n") };
    this.dataLines = [];
    this.eventName = "";
    return event;
  }
}
