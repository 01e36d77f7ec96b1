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
    const dialog = new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
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
    const dialog = new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
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

  it("leaves the longest thinking to the server when empty, names its default, and takes 0", () => {
    const changes: Settings[] = [];
    const dialog = new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
    const box = document.getElementById("thinking-budget") as HTMLInputElement;
    const hint = document.getElementById("thinking-budget-hint")!;
    expect(box.labels?.[0]?.textContent).toBe("Longest thinking, in tokens");
    expect(box.getAttribute("aria-describedby")).toBe(hint.id);
    expect(box.hidden).toBe(false);
    expect(box.value).toBe("");
    // qvl serve sets no budget unless asked.
    expect(box.placeholder).toBe("Server default (none)");
    expect(hint.textContent).toBe(
      "Only for models that think (Qwen3-VL Thinking): after this many tokens of reasoning the model stops " +
        "thinking and answers (0: no thinking). Other models ignore it. Empty: the server's default, " +
        "none: it thinks until the answer's length runs out.",
    );

    dialog.setServerLimits({ ...DEFAULT_SERVER_LIMITS, contextTokens: 8192, defaultThinkingTokens: 600 });
    expect(box.placeholder).toBe("Server default (600)");
    expect(box.max).toBe("8192");
    expect(hint.textContent).toMatch(/^Only for models that think .* Empty: the server's default, 600 tokens\.$/);

    const type = (text: string) => {
      box.value = text;
      box.dispatchEvent(new Event("input", { bubbles: true }));
      box.dispatchEvent(new Event("blur"));
    };
    type("0");
    expect(changes.at(-1)?.thinkingBudget).toBe(0);
    expect(box.value).toBe("0");
    type("250");
    expect(changes.at(-1)?.thinkingBudget).toBe(250);
    type("99999");
    expect(changes.at(-1)?.thinkingBudget).toBe(8192);
    type("2.5");
    expect(changes.at(-1)?.thinkingBudget).toBe(8192);
    expect(box.value).toBe("8192");
    // The other token box keeps its own setting.
    expect(changes.at(-1)?.maxTokens).toBeNull();
    type("");
    expect(changes.at(-1)?.thinkingBudget).toBeNull();
    expect(box.value).toBe("");
  });
});

describe("the settings drawer's sampling", () => {
  let changes: Settings[];
  beforeEach(() => {
    document.documentElement.innerHTML = new DOMParser().parseFromString(PAGE, "text/html").documentElement.innerHTML;
    HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
      this.open = true;
    };
    changes = [];
  });

  const box = (label: string) => {
    const found = [...document.querySelectorAll<HTMLInputElement>("#sampling-fields input")].find(
      (input) => input.labels?.[0]?.textContent === label,
    );
    if (!found) throw new Error(`no box labelled ${label}`);
    return found;
  };
  const type = (input: HTMLInputElement, text: string) => {
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const errorOf = (input: HTMLInputElement) => document.getElementById(`${input.id}-error`) as HTMLParagraphElement;

  it("names the server's defaults and sends nothing it was not asked to", () => {
    const dialog = new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
    expect([...document.querySelectorAll("#sampling-fields label")].map((label) => label.textContent)).toEqual([
      "Top P",
      "Top K",
      "Min P",
      "Repetition penalty",
      "Presence penalty",
      "Frequency penalty",
      "Seed",
    ]);
    dialog.setSamplingDefaults({ temperature: 0.6, topP: 0.95, topK: 40 });
    expect(box("Top P").placeholder).toBe("Default 0.95");
    expect(box("Top K").placeholder).toBe("Default 40");
    expect(box("Min P").placeholder).toBe("Default");
    expect(box("Seed").placeholder).toBe("Random");
    const temperature = document.getElementById("temperature") as HTMLInputElement;
    expect(temperature.value).toBe("0.6");
    expect(document.getElementById("temperature-value")?.textContent).toBe("0.60, the server's default");

    // Typing elsewhere leaves every sampling setting to the server.
    const prompt = document.getElementById("system-prompt") as HTMLTextAreaElement;
    prompt.value = "Be brief.";
    prompt.dispatchEvent(new Event("input", { bubbles: true }));
    expect(changes.at(-1)).toEqual({ ...DEFAULT_SETTINGS, systemPrompt: "Be brief." });
  });

  it("takes values in range, names the range of one out of it, and shows the value in force when left", () => {
    new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
    const topP = box("Top P");
    type(topP, "0.5");
    expect(changes.at(-1)?.topP).toBe(0.5);
    expect(errorOf(topP).hidden).toBe(true);
    expect(document.getElementById("sampling-changed")?.textContent).toBe("1 changed");

    type(topP, "1.5");
    expect(changes.at(-1)?.topP).toBe(0.5);
    expect(errorOf(topP).hidden).toBe(false);
    expect(errorOf(topP).textContent).toBe("Top P must be more than 0 and at most 1.");
    expect(topP.getAttribute("aria-invalid")).toBe("true");
    expect(topP.getAttribute("aria-describedby")).toContain(errorOf(topP).id);
    topP.dispatchEvent(new Event("blur"));
    expect(topP.value).toBe("0.5");
    expect(errorOf(topP).hidden).toBe(true);
    expect(topP.hasAttribute("aria-invalid")).toBe(false);

    type(box("Seed"), "-3");
    expect(errorOf(box("Seed")).textContent).toBe("Seed must be a whole number, 0 or more.");
    type(box("Seed"), "42");
    type(box("Repetition penalty"), "1.1");
    type(topP, "");
    expect(changes.at(-1)).toEqual({ ...DEFAULT_SETTINGS, seed: 42, repetitionPenalty: 1.1 });
  });

  it("edits stop strings up to the server's count, with \\n for a line break", () => {
    const dialog = new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
    dialog.setServerLimits({ ...DEFAULT_SERVER_LIMITS, stopStrings: 2 });
    const add = document.getElementById("stop-add") as HTMLButtonElement;
    expect(document.getElementById("stop-hint")?.textContent).toContain("up to 2");
    add.click();
    const first = document.querySelector<HTMLInputElement>("#stop-list input")!;
    expect(document.activeElement).toBe(first);
    expect(first.getAttribute("aria-label")).toBe("Stop string 1");
    type(first, "\\n\\n");
    expect(changes.at(-1)?.stop).toEqual(["\n\n"]);
    add.click();
    expect(add.hidden).toBe(true);
    const second = document.querySelectorAll<HTMLInputElement>("#stop-list input")[1];
    type(second, "x".repeat(513));
    expect(changes.at(-1)?.stop).toEqual(["\n\n"]);
    expect(second.getAttribute("aria-invalid")).toBe("true");
    type(second, "END");
    expect(changes.at(-1)?.stop).toEqual(["\n\n", "END"]);

    document.querySelector<HTMLButtonElement>('[aria-label="Remove stop string 1"]')!.click();
    expect(changes.at(-1)?.stop).toEqual(["END"]);
    expect(add.hidden).toBe(false);
    expect(document.activeElement).toBe(second);
    expect(second.getAttribute("aria-label")).toBe("Stop string 1");
  });

  it("shows saved choices opened, and resets everything but the API key to the server's defaults", () => {
    const saved: Settings = {
      ...DEFAULT_SETTINGS,
      temperature: 1.2,
      topK: 5,
      stop: ["\n"],
      maxTokens: 100,
      thinkingBudget: 64,
      detail: "low",
      systemPrompt: "Be brief.",
      apiKey: "sk-1",
    };
    new SettingsDialog(
      saved,
      (s) => changes.push(s),
      () => undefined,
    );
    expect((document.getElementById("more-sampling") as HTMLDetailsElement).open).toBe(true);
    expect(document.getElementById("sampling-changed")?.textContent).toBe("2 changed");
    expect(box("Top K").value).toBe("5");
    expect(document.querySelector<HTMLInputElement>("#stop-list input")?.value).toBe("\\n");
    expect(document.getElementById("temperature-value")?.textContent).toBe("1.20");
    expect((document.getElementById("thinking-budget") as HTMLInputElement).value).toBe("64");

    document.getElementById("temperature-default")!.click();
    expect(changes.at(-1)?.temperature).toBeNull();
    expect(document.getElementById("temperature-default")!.hidden).toBe(true);
    expect(document.activeElement?.id).toBe("temperature");

    document.getElementById("settings-reset")!.click();
    expect(changes.at(-1)).toEqual({ ...DEFAULT_SETTINGS, apiKey: "sk-1" });
    expect(box("Top K").value).toBe("");
    expect((document.getElementById("thinking-budget") as HTMLInputElement).value).toBe("");
    expect(document.querySelectorAll("#stop-list li")).toHaveLength(0);
    expect(document.getElementById("sampling-changed")?.textContent).toBe("");
  });

  it("says when the conversation on screen keeps other instructions than the setting", () => {
    let onScreen: string | undefined;
    const settings = { ...DEFAULT_SETTINGS, systemPrompt: "Be brief." };
    const dialog = new SettingsDialog(
      settings,
      (s) => changes.push(s),
      () => onScreen,
    );
    const note = document.getElementById("system-prompt-conversation")!;
    dialog.open();
    expect(note.hidden).toBe(true);
    onScreen = "Be brief.";
    dialog.open();
    expect(note.hidden).toBe(true);
    onScreen = "Answer in French.";
    dialog.open();
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe(
      "The conversation on screen keeps the instructions it started with: “Answer in French.”",
    );
    const prompt = document.getElementById("system-prompt") as HTMLTextAreaElement;
    prompt.value = "Answer in French. ";
    prompt.dispatchEvent(new Event("input", { bubbles: true }));
    expect(note.hidden).toBe(true);
    onScreen = "";
    dialog.open();
    expect(note.textContent).toBe("The conversation on screen started without instructions and keeps it that way.");
  });
});

describe("the settings drawer's answer format", () => {
  beforeEach(() => {
    document.documentElement.innerHTML = new DOMParser().parseFromString(PAGE, "text/html").documentElement.innerHTML;
  });

  it("shows the schema box for JSON with a schema only, and says what is wrong with its text", () => {
    const changes: Settings[] = [];
    new SettingsDialog(
      { ...DEFAULT_SETTINGS },
      (s) => changes.push(s),
      () => undefined,
    );
    const field = document.getElementById("json-schema-field")!;
    const box = document.getElementById("json-schema") as HTMLTextAreaElement;
    const error = document.getElementById("json-schema-error")!;
    const choose = (value: string) => {
      const radio = document.querySelector<HTMLInputElement>(`input[name="answer-format"][value="${value}"]`)!;
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
    };
    expect(document.querySelector<HTMLInputElement>('input[name="answer-format"]:checked')?.value).toBe("text");
    expect(field.hidden).toBe(true);

    choose("json_schema");
    expect(field.hidden).toBe(false);
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("Paste a JSON schema, or choose another answer format.");
    box.value = '{"type": "object",';
    box.dispatchEvent(new Event("input", { bubbles: true }));
    expect(error.textContent).toMatch(/^This is not JSON: /);
    expect(box.getAttribute("aria-invalid")).toBe("true");
    box.value = '{"type": "object"}';
    box.dispatchEvent(new Event("input", { bubbles: true }));
    expect(error.hidden).toBe(true);
    expect(box.getAttribute("aria-invalid")).toBe("false");
    expect(changes.at(-1)).toMatchObject({ answerFormat: "json_schema", jsonSchema: '{"type": "object"}' });

    choose("json");
    expect(field.hidden).toBe(true);
    expect(changes.at(-1)).toMatchObject({ answerFormat: "json", jsonSchema: '{"type": "object"}' });
  });
});
