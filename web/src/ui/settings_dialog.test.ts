// @vitest-environment jsdom
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS } from "../api/server_limits";
import { DEFAULT_SETTINGS, type Settings } from "../settings";
import { SettingsDialog } from "./settings_dialog";

// The page itself, so that the test reads the radios and labels it really has.
const PAGE = readFileSync(resolve(__dirname, "../../index.html"), "utf8");

/** What a screen reader names each detail radio: the text of its <label>. */
function detailNames(): string[] {
  return [...document.querySelectorAll<HTMLInputElement>('input[name="detail"]')].map(
    (radio) => radio.labels?.[0]?.textContent?.trim() ?? "",
  );
}

describe("the settings drawer's image detail", () => {
  beforeEach(() => {
    document.documentElement.innerHTML = new DOMParser().parseFromString(PAGE, "text/html").documentElement.innerHTML;
  });

  it("names qvl serve's default budgets until the server's limits come, then the server's", () => {
    const changes: Settings[] = [];
    const dialog = new SettingsDialog({ ...DEFAULT_SETTINGS }, (s) => changes.push(s));
    expect(detailNames()).toEqual([
      "Server default: up to 1280 image tokens",
      "Low: fastest, up to 256 image tokens",
      "Medium: text and charts, up to 1024 tokens",
      "High: small print and precise boxes, up to 4096 tokens (slower)",
    ]);

    dialog.setServerLimits({
      ...DEFAULT_SERVER_LIMITS,
      imageDefaultTokens: 640,
      imageLowDetailTokens: 256,
      imageHighDetailTokens: 900,
    });
    expect(detailNames()).toEqual([
      "Server default: up to 640 image tokens",
      "Low: fastest, up to 256 image tokens",
      "Medium: text and charts, up to 900 tokens",
      "High: small print and precise boxes, up to 900 tokens",
    ]);

    // The choice itself is unchanged by new limits, and still picked by its value.
    const medium = document.querySelector<HTMLInputElement>('input[name="detail"][value="medium"]')!;
    medium.checked = true;
    medium.dispatchEvent(new Event("change", { bubbles: true }));
    expect(changes.at(-1)?.detail).toBe("medium");
  });

  it("leaves the longest answer to the server when empty, and cuts a number to the server's context", () => {
    const changes: Settings[] = [];
    const dialog = new SettingsDialog({ ...DEFAULT_SETTINGS }, (s) => changes.push(s));
    dialog.setServerLimits({ ...DEFAULT_SERVER_LIMITS, contextTokens: 8192, defaultAnswerTokens: 1000 });
    const box = document.getElementById("max-tokens") as HTMLInputElement;
    expect(box.value).toBe("");
    expect(box.placeholder).toBe("Server default (1000)");
    expect(document.getElementById("max-tokens-hint")?.textContent).toContain(
      "1000 or what the conversation leaves of its 8192",
    );
    const type = (text: string) => {
      box.value = text;
      box.dispatchEvent(new Event("input", { bubbles: true }));
      box.dispatchEvent(new Event("blur"));
    };
    type("300");
    expect(changes.at(-1)?.maxTokens).toBe(300);
    type("99999");
    expect(changes.at(-1)?.maxTokens).toBe(8192);
    expect(box.value).toBe("8192");
    type("2.5");
    expect(changes.at(-1)?.maxTokens).toBe(8192);
    type("");
    expect(changes.at(-1)?.maxTokens).toBeNull();
    expect(box.value).toBe("");
  });
});
