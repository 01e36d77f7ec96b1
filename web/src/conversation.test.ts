import { describe, expect, it } from "vitest";
import { conversationMatches, newConversation } from "./conversation";

describe("conversationMatches", () => {
  it("finds the words in the title or any message of any version, ignoring case", () => {
    const found = newConversation();
    found.title = "Shopping list";
    found.messages.push(
      { id: "c-u", role: "user", text: "hi", images: [] },
      { id: "a1", role: "assistant", parentId: "c-u", text: "Milk, EGGS and bread.", status: "done" },
      { id: "a2", role: "assistant", parentId: "c-u", text: "Only Ünterhosen.", status: "done" },
    );
    for (const query of ["shopping", "LIST", "eggs", "Milk, eggs", "ünter", "  hi  ", ""]) {
      expect(conversationMatches(found, query), query).toBe(true);
    }
    for (const query of ["butter", "list milk"]) expect(conversationMatches(found, query), query).toBe(false);
  });
});
