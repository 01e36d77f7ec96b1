// Keeps conversations, their images and videos in the browser across reloads. IndexedDB
// holds Blobs without the size limits and base64 overhead of localStorage; where it is
// unavailable (some private modes) everything lives in memory for the visit.
import { rename, videosOf, type Conversation } from "../conversation";
import { upgradeStoredConversation } from "../conversation_tree";

export interface ConversationStore {
  list(): Promise<Conversation[]>; // newest first
  get(id: string): Promise<Conversation | undefined>;
  save(conversation: Conversation): Promise<void>;
  remove(id: string): Promise<void>;
  putImage(id: string, blob: Blob): Promise<void>;
  getImage(id: string): Promise<Blob | undefined>;
  putVideo(id: string, blob: Blob): Promise<void>;
  getVideo(id: string): Promise<Blob | undefined>;
}

/**
 * Larger videos are sent but not kept: a few long clips would fill the browser's quota
 * and push out every other conversation. A saved conversation then says its video is
 * gone (its poster stays).
 */
export const MAX_STORED_VIDEO_BYTES = 64 * 1024 * 1024;

export function keepsVideo(bytes: number): boolean {
  return bytes <= MAX_STORED_VIDEO_BYTES;
}

const DB_NAME = "qvl";
const DB_VERSION = 2; // 2 adds the videos store
const CONVERSATIONS = "conversations";
const IMAGES = "images";
const VIDEOS = "videos";

/** Blobs in the image store: images and video posters, of every version of every message. */
export function imageIds(conversation: Conversation): string[] {
  return conversation.messages.flatMap((m) =>
    m.role === "user"
      ? [
          ...m.images.map((image) => image.id),
          ...videosOf(m).flatMap((video) => (video.posterId ? [video.posterId] : [])),
        ]
      : [],
  );
}

export function videoIds(conversation: Conversation): string[] {
  return conversation.messages.flatMap((m) => (m.role === "user" ? videosOf(m).map((video) => video.id) : []));
}

function newestFirst(a: Conversation, b: Conversation): number {
  return b.updatedAt - a.updatedAt;
}

export class MemoryStore implements ConversationStore {
  private conversations = new Map<string, Conversation>();
  private images = new Map<string, Blob>();
  private videos = new Map<string, Blob>();

  async list() {
    return [...this.conversations.values()].sort(newestFirst);
  }
  async get(id: string) {
    return this.conversations.get(id);
  }
  async save(conversation: Conversation) {
    this.conversations.set(conversation.id, structuredClone(conversation));
  }
  async remove(id: string) {
    const conversation = this.conversations.get(id);
    if (conversation) {
      imageIds(conversation).forEach((image) => this.images.delete(image));
      videoIds(conversation).forEach((video) => this.videos.delete(video));
    }
    this.conversations.delete(id);
  }
  async putImage(id: string, blob: Blob) {
    this.images.set(id, blob);
  }
  async getImage(id: string) {
    return this.images.get(id);
  }
  async putVideo(id: string, blob: Blob) {
    this.videos.set(id, blob);
  }
  async getVideo(id: string) {
    return this.videos.get(id);
  }
}

function promised<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(transaction: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onabort = () => reject(transaction.error ?? new Error("IndexedDB transaction aborted"));
    transaction.onerror = () => reject(transaction.error);
  });
}

export class IndexedDbStore implements ConversationStore {
  private constructor(private readonly db: IDBDatabase) {}

  static async open(): Promise<IndexedDbStore> {
    const request = indexedDB.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(CONVERSATIONS)) db.createObjectStore(CONVERSATIONS, { keyPath: "id" });
      if (!db.objectStoreNames.contains(IMAGES)) db.createObjectStore(IMAGES);
      if (!db.objectStoreNames.contains(VIDEOS)) db.createObjectStore(VIDEOS);
    };
    return new IndexedDbStore(await promised(request));
  }

  async list() {
    const all = await promised(this.db.transaction(CONVERSATIONS).objectStore(CONVERSATIONS).getAll());
    return (all as Conversation[]).map(upgradeStoredConversation).sort(newestFirst);
  }

  async get(id: string) {
    const stored = (await promised(this.db.transaction(CONVERSATIONS).objectStore(CONVERSATIONS).get(id))) as
      Conversation | undefined;
    return stored && upgradeStoredConversation(stored);
  }

  async save(conversation: Conversation) {
    const transaction = this.db.transaction(CONVERSATIONS, "readwrite");
    transaction.objectStore(CONVERSATIONS).put(conversation);
    await done(transaction);
  }

  async remove(id: string) {
    const conversation = await this.get(id);
    const transaction = this.db.transaction([CONVERSATIONS, IMAGES, VIDEOS], "readwrite");
    transaction.objectStore(CONVERSATIONS).delete(id);
    if (conversation) {
      imageIds(conversation).forEach((image) => transaction.objectStore(IMAGES).delete(image));
      videoIds(conversation).forEach((video) => transaction.objectStore(VIDEOS).delete(video));
    }
    await done(transaction);
  }

  private async putBlob(storeName: string, id: string, blob: Blob) {
    const transaction = this.db.transaction(storeName, "readwrite");
    transaction.objectStore(storeName).put(blob, id);
    await done(transaction);
  }

  private async getBlob(storeName: string, id: string) {
    return (await promised(this.db.transaction(storeName).objectStore(storeName).get(id))) as Blob | undefined;
  }

  putImage(id: string, blob: Blob) {
    return this.putBlob(IMAGES, id, blob);
  }

  getImage(id: string) {
    return this.getBlob(IMAGES, id);
  }

  putVideo(id: string, blob: Blob) {
    return this.putBlob(VIDEOS, id, blob);
  }

  getVideo(id: string) {
    return this.getBlob(VIDEOS, id);
  }
}

/** Renames the stored conversation `id` (conversation.ts's rename), keeping its place in
 * the list: a new name is no news. */
export async function renameStored(store: ConversationStore, id: string, name: string): Promise<void> {
  const conversation = await store.get(id);
  if (!conversation) return;
  rename(conversation, name);
  await store.save(conversation);
}

export async function openStore(): Promise<ConversationStore> {
  try {
    return await IndexedDbStore.open();
  } catch {
    return new MemoryStore();
  }
}

export function isQuotaError(error: unknown): boolean {
  return error instanceof DOMException && (error.name === "QuotaExceededError" || error.name === "UnknownError");
}

/**
 * Runs a write; when the browser's storage is full, drops the oldest conversations
 * (never `keepId`) until it fits. Returns how many were dropped.
 */
export async function writeMakingRoom(
  store: ConversationStore,
  keepId: string,
  write: () => Promise<void>,
): Promise<number> {
  let dropped = 0;
  for (;;) {
    try {
      await write();
      return dropped;
    } catch (error) {
      if (!isQuotaError(error)) throw error;
      const oldest = (await store.list()).filter((c) => c.id !== keepId).at(-1);
      if (!oldest) throw error;
      await store.remove(oldest.id);
      dropped++;
    }
  }
}
