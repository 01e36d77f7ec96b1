// KaTeX (maths) and highlight.js (code colours) are most of the page's script, and most
// answers need neither: each is fetched, from the server like the rest of the page, the
// first time an answer has a formula or a fenced code block with a language. Until it
// has arrived (or when fetching failed: the server went away) code shows plain and
// formulas as their TeX, and the answer is drawn again once it is there.

export class LazyModule<T> {
  private module: T | undefined;
  private loading: Promise<T> | undefined;

  constructor(private readonly importModule: () => Promise<T>) {}

  /** The module once it has arrived, else undefined. */
  get loaded(): T | undefined {
    return this.module;
  }

  /** Fetches the module once; after a failure the next call tries again. */
  load(): Promise<T> {
    this.loading ??= this.importModule().then(
      (module) => (this.module = module),
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }
}

export const highlighter = new LazyModule(() => import("./highlight"));
export const mathsRenderer = new LazyModule(() => import("./maths_render"));

/**
 * Collects what one render lacked; `whenLoaded` calls back once all of it has arrived
 * (never when nothing was missing, nor when fetching failed).
 */
export class MissingModules {
  private readonly waits = new Set<Promise<unknown>>();

  need(module: LazyModule<unknown>): void {
    this.waits.add(module.load());
  }

  whenLoaded(callback: () => void): void {
    if (this.waits.size === 0) return;
    Promise.all(this.waits).then(callback, () => {
      // Shown plain; the next render asks again.
    });
  }
}
