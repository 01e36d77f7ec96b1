// Object URLs (for <img>) and data URLs (for the API) of the current conversation's
// images, made once from the stored Blobs and released when the conversation changes.
import type { ConversationStore } from "../storage/conversation_store";
import { blobToDataUrl, ImageError } from "./prepare";

export class ImageCache {
  private displayUrls = new Map<string, Promise<string | undefined>>();
  private dataUrls = new Map<string, Promise<string>>();
  // Images of this visit, kept even if the browser's storage refused them.
  private blobs = new Map<string, Blob>();

  constructor(private readonly store: ConversationStore) {}

  /** Takes over a new image and its object URL (the composer's thumbnail). */
  adopt(id: string, blob: Blob, url: string): void {
    this.blobs.set(id, blob);
    this.displayUrls.set(id, Promise.resolve(url));
  }

  private async blob(id: string): Promise<Blob | undefined> {
    return this.blobs.get(id) ?? (await this.store.getImage(id));
  }

  displayUrl(id: string): Promise<string | undefined> {
    let url = this.displayUrls.get(id);
    if (!url) {
      url = this.blob(id).then((blob) => (blob ? URL.createObjectURL(blob) : undefined));
      this.displayUrls.set(id, url);
    }
    return url;
  }

  dataUrl(id: string): Promise<string> {
    let url = this.dataUrls.get(id);
    if (!url) {
      url = this.blob(id).then((blob) => {
        if (!blob)
          throw new ImageError(
            "An image of this conversation is no longer stored in this browser. Start a new conversation.",
          );
        return blobToDataUrl(blob);
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
