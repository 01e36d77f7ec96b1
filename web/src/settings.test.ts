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
  type Settings,
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

  it("keeps each sampling setting only within the range qvl accepts", () => {
    const kept = {
      temperature: 0,
      topP: 1,
      topK: -1,
      minP: 1,
      repetitionPenalty: 10,
      presencePenalty: -2,
      frequencyPenalty: 2,
      seed: 0,
    };
    expect(normalizeSettings(kept)).toMatchObject(kept);
    const refused = {
      temperature: 2.01,
      topP: 0,
      topK: 2.5,
      minP: -0.1,
      repetitionPenalty: 0,
      presencePenalty: 2.5,
      frequencyPenalty: "1",
      seed: -1,
    };
    expect(normalizeSettings(refused)).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings({ topK: 1 << 21, seed: 2 ** 60 })).toEqual(DEFAULT_SETTINGS);
  });

  it("keeps an answer format it knows, and the schema as typed", () => {
    expect(normalizeSettings({ answerFormat: "json", jsonSchema: "{oops" })).toMatchObject({
      answerFormat: "json",
      jsonSchema: "{oops",
    });
    expect(normalizeSettings({ answerFormat: "json_schema" }).answerFormat).toBe("json_schema");
    expect(normalizeSettings({ answerFormat: "xml", jsonSchema: 5 })).toMatchObject({
      answerFormat: "text",
      jsonSchema: "",
    });
  });

  it("keeps stop strings that the server takes", () => {
    expect(normalizeSettings({ stop: ["\n\n", "", 7, "x".repeat(513), "é".repeat(256), "END"] }).stop).toEqual([
      "\n\n",
      "é".repeat(256),
      "END",
    ]);
    expect(normalizeSettings({ stop: "END" }).stop).toEqual([]);
  });

  it("round-trips through storage and survives broken JSON", () => {
    const changed: Settings = {
      ...DEFAULT_SETTINGS,
      temperature: 0,
      topK: 5,
      seed: 7,
      stop: ["END"],
      maxTokens: 64,
      thinkingBudget: 0,
      detail: "high",
      systemPrompt: "Be brief.",
      apiKey: "k",
    };
    saveSettings(localStorage, changed);
    expect(loadSettings(localStorage)).toEqual(changed);
    localStorage.setItem("qvl.settings", "{not json");
    expect(loadSettings(localStorage)).toEqual(DEFAULT_SETTINGS);
  });

  it("maps image detail to max_pixels at the server's pixels per token", () => {
    const limits = DEFAULT_SERVER_LIMITS;
    expect(requestOptions({ ...DEFAULT_SETTINGS, detail: "auto" }, limits)).toEqual({});
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
    expect(normalizeSettings({ maxTokens: 99_999 }, { ...DEFAULT_SERVER_LIMITS, contextTokens: 8192 }).maxTokens).toBe(
      8192,
    );
    expect(requestOptions({ ...DEFAULT_SETTINGS, maxTokens: 512 }, DEFAULT_SERVER_LIMITS).max_tokens).toBe(512);
  });

  it("leaves the thinking budget to the server unless one is chosen, 0 included", () => {
    expect(DEFAULT_SETTINGS.thinkingBudget).toBeNull();
    expect(normalizeSettings({}).thinkingBudget).toBeNull();
    expect(normalizeSettings({ thinkingBudget: null }).thinkingBudget).toBeNull();
    expect(normalizeSettings({ thinkingBudget: 0 }).thinkingBudget).toBe(0);
    expect(normalizeSettings({ thinkingBudget: 512 }).thinkingBudget).toBe(512);
    expect(normalizeSettings({ thinkingBudget: "300" }).thinkingBudget).toBe(300);
    for (const refused of [-1, 2.5, "", " ", true, "many", Infinity]) {
      expect(normalizeSettings({ thinkingBudget: refused }).thinkingBudget).toBeNull();
    }
    const small = { ...DEFAULT_SERVER_LIMITS, contextTokens: 4096 };
    expect(normalizeSettings({ thinkingBudget: 99_999 }, small).thinkingBudget).toBe(4096);

    expect(requestOptions(DEFAULT_SETTINGS, DEFAULT_SERVER_LIMITS)).not.toHaveProperty("thinking_token_budget");
    expect(
      requestOptions({ ...DEFAULT_SETTINGS, thinkingBudget: 0 }, DEFAULT_SERVER_LIMITS).thinking_token_budget,
    ).toBe(0);
    expect(
      requestOptions({ ...DEFAULT_SETTINGS, thinkingBudget: 256, maxTokens: 1024 }, DEFAULT_SERVER_LIMITS),
    ).toEqual({ max_tokens: 1024, thinking_token_budget: 256 });
  });

  it("reads the values older pages saved with every change as the server's defaults", () => {
    // Before version 2 the answer length, before version 3 the temperature 0.7.
    localStorage.setItem("qvl.settings", JSON.stringify({ temperature: 0.7, maxTokens: 2048, detail: "low" }));
    expect(loadSettings(localStorage)).toEqual({ ...DEFAULT_SETTINGS, detail: "low" });
    localStorage.setItem("qvl.settings", JSON.stringify({ temperature: 0.7, maxTokens: 2048, version: 2 }));
    expect(loadSettings(localStorage)).toEqual({ ...DEFAULT_SETTINGS, maxTokens: 2048 });
    localStorage.setItem("qvl.settings", JSON.stringify({ temperature: 0.2, version: 2 }));
    expect(loadSettings(localStorage).temperature).toBe(0.2);
    // Saved by this page, both are choices.
    saveSettings(localStorage, { ...DEFAULT_SETTINGS, maxTokens: 2048, temperature: 0.7 });
    expect(loadSettings(localStorage)).toMatchObject({ maxTokens: 2048, temperature: 0.7 });
  });

  it("sends the API key as a bearer token only when there is one", () => {
    expect(apiHeaders(DEFAULT_SETTINGS)).toEqual({});
    expect(apiHeaders(normalizeSettings({ apiKey: " sk-123 " }))).toEqual({ Authorization: "Bearer sk-123" });
  });
});
