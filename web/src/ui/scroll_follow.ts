// Keeps the end of the conversation in view while an answer grows, until the person
// scrolls up to read; then a button takes them back to the end, and following resumes
// (as it does when they scroll back down themselves).

// Within this many pixels of the end, scrolling down resumes following.
const FOLLOW_DISTANCE_PX = 80;

export function distanceFromEnd(box: HTMLElement): number {
  return box.scrollHeight - box.scrollTop - box.clientHeight;
}

export class ScrollFollower {
  private following = true;
  private lastTop = 0;
  private lastHeight = 0;

  /** `content` grows as answers stream in; `focusAfterJump` takes focus from the button,
   * which hides once it has done its job, when it was reached with the keyboard. */
  constructor(
    private readonly scroller: HTMLElement,
    private readonly content: HTMLElement,
    private readonly button: HTMLButtonElement,
    focusAfterJump: HTMLElement,
  ) {
    scroller.addEventListener("scroll", () => this.onScroll(), { passive: true });
    // The scroller itself shrinks when the question box grows or a phone's keyboard opens.
    const observer = new ResizeObserver(() => {
      if (this.following) this.toEnd();
      else this.update();
    });
    observer.observe(content);
    observer.observe(scroller);
    button.addEventListener("click", () => {
      const byKeyboard = button.matches(":focus-visible");
      this.follow();
      if (byKeyboard) focusAfterJump.focus();
    });
  }

  /** Jumps to the end and follows what comes. */
  follow(): void {
    this.following = true;
    this.toEnd();
    this.update();
  }

  /** The person is reading something that just opened (a long question unfolded): it
   * grows in place instead of the view jumping past it. */
  hold(): void {
    this.following = false;
    this.update();
  }

  private onScroll(): void {
    const { scrollTop, scrollHeight } = this.scroller;
    // Any move up is the person's (following only ever scrolls down), unless the content
    // shrank under it; a smooth wheel scroll starts with small moves, which a distance
    // from the end alone would take for staying at the end.
    if (scrollTop < this.lastTop && scrollHeight >= this.lastHeight) this.following = false;
    else if (distanceFromEnd(this.scroller) < FOLLOW_DISTANCE_PX) this.following = true;
    this.update();
  }

  private toEnd(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.update();
  }

  private update(): void {
    this.lastTop = this.scroller.scrollTop;
    this.lastHeight = this.scroller.scrollHeight;
    this.button.hidden = this.following || this.endInView();
  }

  /** Whether the last message is seen to its end: only the space under it is hidden.
   * The button would then cover the latest text instead of leading to it. */
  private endInView(): boolean {
    const below = parseFloat(getComputedStyle(this.content).paddingBottom) || 0;
    return distanceFromEnd(this.scroller) <= below + 1;
  }
}
