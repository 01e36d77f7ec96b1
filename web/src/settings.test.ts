// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { DEFAULT_SERVER_LIMITS } from "./api/server_limits";
import {
  apiHeaders,
  DEFAULT_SETTINGS,
  loadSettings,
  normalizeSettings,
  requestOptions,
  saveSettings,
} from "./settings";

describe("settings", () => {
  it("falls back per field when stored values are missing or out of range", () => {
    expect(normalizeSettings({ temperature: 5, maxTokens: 100, detail: "huge", systemPrompt: 3 })).toEqual({
      ...DEFAULT_SETTINGS,
      maxTokens: 100,
    });
    expect(normalizeSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings({ maxTokens: 1.5 }).maxTokens).toBe(DEFAULT_SETTINGS.maxTokens);
  });

  it("round-trips through storage and survives broken JSON", () => {
    const changed = { temperature: 0, maxTokens: 64, detail: "high" as const, systemPrompt: "Be brief.", apiKey: "k" };
    saveSettings(localStorage, changed);
    expect(loadSettings(localStorage)).toEqual(changed);
    localStorage.setItem("qvl.settings", "{not json");
    expect(loadSettings(localStorage)).toEqual(DEFAULT_SETTINGS);
  });

  it("maps image detail to max_pixels at the server's pixels per token", () => {
    const limits = DEFAULT_SERVER_LIMITS;
    expect(requestOptions({ ...DEFAULT_SETTINGS, detail: "auto" }, limits)).toEqual({ temperature: 0.7 });
    expect(requestOptions({ ...DEFAULT_SETTINGS, detail: "low" }, limits).max_pixels).toBe(262144);
    expect(requestOptions({ ...DEFAULT_SETTINGS, detail: "medium" }, limits).max_pixels).toBe(1048576);
    expect(requestOptions({ ...DEFAULT_SETTINGS, detail: "high" }, limits).max_pixels).toBe(4194304);
    const other = { ...limits, imagePixelsPerToken: 28 * 28, imageHighDetailTokens: 8192 };
    expect(requestOptions({ ...DEFAULT_SETTINGS, detail: "high" }, other).max_pixels).toBe(8192 * 28 * 28);
  });

  it("leaves the answer's length to the server unless one is chosen", () => {
    expect(DEFAULT_SETTINGS.maxTokens).toBeNull();
    expect(normalizeSettings({ maxTokens: null }).maxTokens).toBeNull();
    expect(normalizeSettings({ maxTokens: 2048 }).maxTokens).toBe(2048);
    expect(requestOptions({ ...DEFAULT_SETTINGS, maxTokens: 512 }, DEFAULT_SERVER_LIMITS).max_tokens).toBe(512);
  });

  it("reads the 2048 older pages saved with every change as the server's default", () => {
    localStorage.setItem("qvl.settings", JSON.stringify({ ...DEFAULT_SETTINGS, maxTokens: 2048, temperature: 0.2 }));
    expect(loadSettings(localStorage)).toEqual({ ...DEFAULT_SETTINGS, temperature: 0.2 });
    // Saved by this page, 2048 is a choice.
    saveSettings(localStorage, { ...DEFAULT_SETTINGS, maxTokens: 2048 });
    expect(loadSettings(localStorage).maxTokens).toBe(2048);
  });

  it("sends the API key as a bearer token only when there is one", () => {
    expect(apiHeaders(DEFAULT_SETTINGS)).toEqual({});
    expect(apiHeaders(normalizeSettings({ apiKey: " sk-123 " }))).toEqual({ Authorization: "Bearer sk-123" });
  });
});
