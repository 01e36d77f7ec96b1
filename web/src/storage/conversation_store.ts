// Keeps conversations and their images in the browser across reloads. IndexedDB holds
// image Blobs without the size limits and base64 overhead of localStorage; where it is
// unavailable (some private modes) everything lives in memory for the visit.
import type { Conversation } from "../conversation";

export interface ConversationStore {
  list(): Promise<Conversation[]>; // newest first
  get(id: string): Promise<Conversation | undefined>;
  save(conversation: Conversation): Promise<void>;
  remove(id: string): Promise<void>;
  putImage(id: string, blob: Blob): Promise<void>;
  getImage(id: string): Promise<Blob | undefined>;
}

const DB_NAME = "qvl";
const DB_VERSION = 1;
const CONVERSATIONS = "conversations";
const IMAGES = "images";

function imageIds(conversation: Conversation): string[] {
  return conversation.messages.flatMap((m) => (m.role === "user" ? m.images.map((image) => image.id) : []));
}

function newestFirst(a: Conversation, b: Conversation): number {
  return b.updatedAt - a.updatedAt;
}

export class MemoryStore implements ConversationStore {
  private conversations = new Map<string, Conversation>();
  private images = new Map<string, Blob>();

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
    if (conversation) imageIds(conversation).forEach((image) => this.images.delete(image));
    this.conversations.delete(id);
  }
  async putImage(id: string, blob: Blob) {
    this.images.set(id, blob);
  }
  async getImage(id: string) {
    return this.images.get(id);
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
    };
    return new IndexedDbStore(await promised(request));
  }

  async list() {
    const all = await promised(this.db.transaction(CONVERSATIONS).objectStore(CONVERSATIONS).getAll());
    return (all as Conversation[]).sort(newestFirst);
  }

  async get(id: string) {
    return (await promised(this.db.transaction(CONVERSATIONS).objectStore(CONVERSATIONS).get(id))) as
      Conversation | undefined;
  }

  async save(conversation: Conversation) {
    const transaction = this.db.transaction(CONVERSATIONS, "readwrite");
    transaction.objectStore(CONVERSATIONS).put(conversation);
    await done(transaction);
  }

  async remove(id: string) {
    const conversation = await this.get(id);
    const transaction = this.db.transaction([CONVERSATIONS, IMAGES], "readwrite");
    transaction.objectStore(CONVERSATIONS).delete(id);
    if (conversation) imageIds(conversation).forEach((image) => transaction.objectStore(IMAGES).delete(image));
    await done(transaction);
  }

  async putImage(id: string, blob: Blob) {
    const transaction = this.db.transaction(IMAGES, "readwrite");
    transaction.objectStore(IMAGES).put(blob, id);
    await done(transaction);
  }

  async getImage(id: string) {
    return (await promised(this.db.transaction(IMAGES).objectStore(IMAGES).get(id))) as Blob | undefined;
  }
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
