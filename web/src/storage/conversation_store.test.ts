import { describe, expect, it } from "vitest";
import { titleFor, type Conversation } from "../conversation";
import { keepsVideo, MAX_STORED_VIDEO_BYTES, MemoryStore, renameStored, writeMakingRoom } from "./conversation_store";

function conversation(id: string, updatedAt: number, imageId?: string): Conversation {
  return {
    id,
    title: id,
    createdAt: 0,
    updatedAt,
    shownChild: {},
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

describe("renaming", () => {
  it("keeps the name given, in the conversation's place in the list, until a blank one", async () => {
    const store = new MemoryStore();
    await store.save(conversation("old", 1));
    await store.save(conversation("new", 2));
    await renameStored(store, "old", "  Greetings \n from  home ");
    const renamed = (await store.get("old"))!;
    expect(renamed.name).toBe("Greetings from home");
    expect(renamed.title).toBe("Greetings from home");
    expect(renamed.updatedAt).toBe(1);
    expect((await store.list()).map((c) => c.title)).toEqual(["new", "Greetings from home"]);
    // The name outlasts new messages: the title is worked out from it.
    renamed.messages.push({ id: "u2", role: "user", parentId: "old-a", text: "again", images: [] });
    expect(titleFor(renamed)).toBe("Greetings from home");

    await renameStored(store, "old", " ");
    const unnamed = (await store.get("old"))!;
    expect(unnamed.name).toBeUndefined();
    expect(unnamed.title).toBe("hi");
    await expect(renameStored(store, "gone", "x")).resolves.toBeUndefined();
    expect(await store.get("gone")).toBeUndefined();
  });
});

describe("videos in the store", () => {
  it("removes a conversation's videos and their posters with it", async () => {
    const store = new MemoryStore();
    const withVideo = conversation("v", 1, "img");
    const question = withVideo.messages[0];
    if (question.role !== "user") throw new Error("the fixture starts with a question");
    question.videos = [
      { id: "vid", name: "clip.mp4", type: "video/mp4", bytes: 1, posterId: "poster", stored: true },
      { id: "big", name: "big.mp4", type: "video/mp4", bytes: 1, stored: false },
    ];
    await store.save(withVideo);
    await store.save(conversation("other", 2));
    await store.putImage("img", new Blob(["i"]));
    await store.putImage("poster", new Blob(["p"]));
    await store.putVideo("vid", new Blob(["v"]));
    expect(await (await store.getVideo("vid"))?.text()).toBe("v");
    await store.remove("v");
    expect(await store.getVideo("vid")).toBeUndefined();
    expect(await store.getImage("poster")).toBeUndefined();
    expect(await store.getImage("img")).toBeUndefined();
    expect((await store.list()).map((c) => c.id)).toEqual(["other"]);
  });

  it("keeps videos up to the cap only", () => {
    expect(MAX_STORED_VIDEO_BYTES).toBe(64 * 1024 * 1024);
    expect(keepsVideo(80_305)).toBe(true);
    expect(keepsVideo(MAX_STORED_VIDEO_BYTES)).toBe(true);
    expect(keepsVideo(MAX_STORED_VIDEO_BYTES + 1)).toBe(false);
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
