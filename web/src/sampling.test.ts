import { describe, expect, it } from "vitest";
import {
  MORE_SAMPLING_FIELDS,
  parseSamplingDefaults,
  parseSamplingText,
  rangeWords,
  SAMPLING_FIELDS,
  stopFromText,
  stopToText,
  TEMPERATURE,
  type SamplingKey,
} from "./sampling";

const field = (key: SamplingKey) => SAMPLING_FIELDS.find((f) => f.key === key)!;

describe("the sampling fields", () => {
  it("name the request fields qvl reads", () => {
    expect(SAMPLING_FIELDS.map((f) => f.param)).toEqual([
      "temperature",
      "top_p",
      "top_k",
      "min_p",
      "repetition_penalty",
      "presence_penalty",
      "frequency_penalty",
      "seed",
    ]);
    expect(MORE_SAMPLING_FIELDS).not.toContain(TEMPERATURE);
  });

  it("take what qvl accepts and nothing else (src/engine/request_ranges.h)", () => {
    const accepts = (key: SamplingKey, text: string) => parseSamplingText(field(key), text) !== undefined;
    expect(parseSamplingText(field("topP"), " ")).toBeNull();
    expect(parseSamplingText(field("topP"), "0.25")).toBe(0.25);
    expect(accepts("topP", "0")).toBe(false);
    expect(accepts("topP", "1")).toBe(true);
    expect(accepts("topK", "-1")).toBe(true);
    expect(accepts("topK", "-2")).toBe(false);
    expect(accepts("topK", "1.5")).toBe(false);
    expect(accepts("topK", String(1 << 20))).toBe(true);
    expect(accepts("topK", String((1 << 20) + 1))).toBe(false);
    expect(accepts("minP", "1")).toBe(true);
    expect(accepts("minP", "1.01")).toBe(false);
    expect(accepts("repetitionPenalty", "0")).toBe(false);
    expect(accepts("repetitionPenalty", "10")).toBe(true);
    expect(accepts("presencePenalty", "-2")).toBe(true);
    expect(accepts("frequencyPenalty", "2.1")).toBe(false);
    expect(accepts("seed", "0")).toBe(true);
    expect(accepts("seed", "-1")).toBe(false);
    expect(accepts("seed", "1e300")).toBe(false);
    expect(accepts("seed", "abc")).toBe(false);
  });

  it("say their ranges in words", () => {
    expect(rangeWords(field("topP"))).toBe("more than 0 and at most 1");
    expect(rangeWords(field("presencePenalty"))).toBe("between \u22122 and 2");
    expect(rangeWords(field("topK"))).toBe("a whole number from \u22121 to 1048576");
    expect(rangeWords(field("seed"))).toBe("a whole number, 0 or more");
  });
});

describe("parseSamplingDefaults", () => {
  it("reads /props default_generation_settings.params under llama-server's names", () => {
    const props = {
      default_generation_settings: {
        params: {
          temperature: 0.7,
          top_p: 0.8,
          top_k: 20,
          min_p: 0,
          repeat_penalty: 1,
          presence_penalty: 0,
          frequency_penalty: 0,
          max_tokens: 2048,
        },
      },
    };
    expect(parseSamplingDefaults(props)).toEqual({
      temperature: 0.7,
      topP: 0.8,
      topK: 20,
      minP: 0,
      repetitionPenalty: 1,
      presencePenalty: 0,
      frequencyPenalty: 0,
    });
  });

  it("leaves out what is missing or malformed", () => {
    expect(parseSamplingDefaults(null)).toEqual({});
    expect(parseSamplingDefaults({ default_generation_settings: { params: 3 } })).toEqual({});
    expect(
      parseSamplingDefaults({ default_generation_settings: { params: { top_p: "0.8", temperature: 9 } } }),
    ).toEqual({});
  });
});

describe("stop strings as typed", () => {
  it("read \\n, \\t and \\\\ as a line break, a tab and a backslash", () => {
    expect(stopFromText("\\n\\n")).toBe("\n\n");
    expect(stopFromText("a\\tb")).toBe("a\tb");
    expect(stopFromText("C:\\\\new")).toBe("C:\\new");
    expect(stopFromText("\\x")).toBe("\\x");
  });

  it("show every stop string so that it reads back the same", () => {
    for (const stop of ["\n\n", "END", "a\\nb", "\\", "tab\there", "C:\\new\n"]) {
      expect(stopFromText(stopToText(stop))).toBe(stop);
    }
    expect(stopToText("Q:\n")).toBe("Q:\\n");
  });
});
