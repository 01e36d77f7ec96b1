// Object URLs (for <img> and <video>) and data URLs (for the API) of the current
// conversation's images or videos, made once from the stored Blobs and released when
// the conversation changes.
import { blobToDataUrl } from "../images/prepare";

export class BlobCache {
  private displayUrls = new Map<string, Promise<string | undefined>>();
  private dataUrls = new Map<string, Promise<string>>();
  // Blobs of this visit, kept even if the browser's storage refused them (or was not
  // asked to keep them, as for large videos).
  private blobs = new Map<string, Blob>();

  /**
   * `load` reads a stored Blob; `missing` is the error for one that is gone (cleared
   * by the browser, or never stored), in words for the person asking.
   */
  constructor(
    private readonly load: (id: string) => Promise<Blob | undefined>,
    private readonly missing: () => Error,
  ) {}

  /** Takes over a new Blob, and its object URL when the composer already made one. */
  adopt(id: string, blob: Blob, url?: string): void {
    this.blobs.set(id, blob);
    if (url) this.displayUrls.set(id, Promise.resolve(url));
  }

  /** The Blob of `id`, or undefined when it is gone. */
  async blob(id: string): Promise<Blob | undefined> {
    return this.blobs.get(id) ?? (await this.load(id).catch(() => undefined));
  }

  displayUrl(id: string): Promise<string | undefined> {
    let url = this.displayUrls.get(id);
    if (!url) {
      url = this.blob(id).then((blob) => (blob ? URL.createObjectURL(blob) : undefined));
      this.displayUrls.set(id, url);
    }
    return url;
  }

  /** "data:TYPE;base64,...", with `type` in place of the Blob's own when given. */
  dataUrl(id: string, type?: string): Promise<string> {
    let url = this.dataUrls.get(id);
    if (!url) {
      url = this.blob(id).then((blob) => {
        if (!blob) throw this.missing();
        return blobToDataUrl(type && blob.type !== type ? new Blob([blob], { type }) : blob);
      });
      // A failed read is not cached: the next send tries again.
      url.catch(() => this.dataUrls.delete(id));
      this.dataUrls.set(id, url);
    }
    return url;
  }

  releaseAll(): void {
    for (const url of this.displayUrls.values()) {
      void url.then((value) => value && URL.revokeObjectURL(value));
    }
    this.displayUrls.clear();
    this.dataUrls.clear();
    this.blobs.clear();
  }
}
