import { describe, expect, it } from "vitest";
import type { Conversation } from "../conversation";
import { MemoryStore, writeMakingRoom } from "./conversation_store";

function conversation(id: string, updatedAt: number, imageId?: string): Conversation {
  return {
    id,
    title: id,
    createdAt: 0,
    updatedAt,
    messages: [
      {
        id: `${id}-u`,
        role: "user",
        text: "hi",
        images: imageId ? [{ id: imageId, name: "a.png", width: 1, height: 1 }] : [],
      },
    ],
  };
}

describe("MemoryStore", () => {
  it("lists newest first and removes a conversation together with its images", async () => {
    const store = new MemoryStore();
    await store.save(conversation("old", 1, "img-old"));
    await store.save(conversation("new", 2));
    await store.putImage("img-old", new Blob(["x"]));
    expect((await store.list()).map((c) => c.id)).toEqual(["new", "old"]);
    await store.remove("old");
    expect(await store.getImage("img-old")).toBeUndefined();
    expect((await store.list()).map((c) => c.id)).toEqual(["new"]);
  });
});

describe("writeMakingRoom", () => {
  it("drops the oldest other conversations until the write fits", async () => {
    const store = new MemoryStore();
    for (const [id, at] of [
      ["a", 1],
      ["b", 2],
      ["current", 3],
    ] as const)
      await store.save(conversation(id, at));
    let failures = 2;
    const dropped = await writeMakingRoom(store, "current", async () => {
      if (failures-- > 0) throw new DOMException("full", "QuotaExceededError");
    });
    expect(dropped).toBe(2);
    expect((await store.list()).map((c) => c.id)).toEqual(["current"]);
  });

  it("gives up when nothing else can go, and passes other errors through", async () => {
    const store = new MemoryStore();
    await store.save(conversation("current", 1));
    const full = () => Promise.reject(new DOMException("full", "QuotaExceededError"));
    await expect(writeMakingRoom(store, "current", full)).rejects.toThrow("full");
    await expect(writeMakingRoom(store, "current", () => Promise.reject(new Error("other")))).rejects.toThrow("other");
  });
});
