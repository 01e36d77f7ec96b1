import { describe, expect, it } from "vitest";
import { parseGrounding, readableGroundingMarkup } from "./parse";

describe("parseGrounding", () => {
  it("reads a JSON list inside ```json fences", () => {
    const answer = [
      "Here are the animals:",
      "```json",
      "[",
      '  {"bbox_2d": [12, 40, 480, 950], "label": "cat"},',
      '  {"bbox_2d": [500, 100, 990, 900], "label": "dog"}',
      "]",
      "```",
    ].join("\n");
    expect(parseGrounding(answer)).toEqual([
      { kind: "box", label: "cat", x1: 12, y1: 40, x2: 480, y2: 950 },
      { kind: "box", label: "dog", x1: 500, y1: 100, x2: 990, y2: 900 },
    ]);
  });

  it("reads objects with other keys, key order, escapes, decimals and single quotes", () => {
    const answer =
      `[{"label": "the \\"big\\" sign", "bbox_2d": [1.5, 2, 3, 4]}, ` +
      `{'bbox_2d': [10, 10, 20, 20], 'text_content': 'x'}, {"bbox_2d": [5,6,7,8], "text_content": "STOP"}]`;
    expect(parseGrounding(answer)).toEqual([
      { kind: "box", label: 'the "big" sign', x1: 1.5, y1: 2, x2: 3, y2: 4 },
      { kind: "box", label: "", x1: 10, y1: 10, x2: 20, y2: 20 },
      { kind: "box", label: "STOP", x1: 5, y1: 6, x2: 7, y2: 8 },
    ]);
  });

  it("keeps complete objects of a cut-off answer and skips the broken tail", () => {
    const answer = '```json\n[{"bbox_2d": [1, 2, 3, 4], "label": "a"}, {"bbox_2d": [5, 6, 7';
    expect(parseGrounding(answer)).toEqual([{ kind: "box", label: "a", x1: 1, y1: 2, x2: 3, y2: 4 }]);
  });

  it("orders corners, clamps to 0..1000 and drops empty boxes", () => {
    expect(parseGrounding('{"bbox_2d": [900, 800, -5, 1200], "label": "x"} {"bbox_2d": [5, 5, 5, 9]}')).toEqual([
      { kind: "box", label: "x", x1: 0, y1: 800, x2: 900, y2: 1000 },
    ]);
  });

  it("reads points", () => {
    expect(parseGrounding('[{"point_2d": [250, 750], "label": "cup"}]')).toEqual([
      { kind: "point", label: "cup", x: 250, y: 750 },
    ]);
  });

  it("reads Qwen2-VL special tokens, a label applying to the boxes after it", () => {
    const answer =
      "<|object_ref_start|>two cats<|object_ref_end|><|box_start|>(10,20),(300,400)<|box_end|>" +
      "<|box_start|>( 500 , 20 ),( 900 , 400 )<|box_end|> and <|object_ref_start|>a bowl<|object_ref_end|>" +
      " at <|box_start|>(100,700),(200,800)<|box_end|>.";
    expect(parseGrounding(answer)).toEqual([
      { kind: "box", label: "two cats", x1: 10, y1: 20, x2: 300, y2: 400 },
      { kind: "box", label: "two cats", x1: 500, y1: 20, x2: 900, y2: 400 },
      { kind: "box", label: "a bowl", x1: 100, y1: 700, x2: 200, y2: 800 },
    ]);
  });

  it("reads <ref>/<box> tags, including boxes without a label", () => {
    expect(parseGrounding("<box>(1,2),(3,4)</box> then <ref>door</ref><box>(10,20),(30,40)</box>")).toEqual([
      { kind: "box", label: "", x1: 1, y1: 2, x2: 3, y2: 4 },
      { kind: "box", label: "door", x1: 10, y1: 20, x2: 30, y2: 40 },
    ]);
  });

  it("finds nothing in plain answers, bare arrays or broken tokens", () => {
    expect(parseGrounding("A cat sits on [1, 2, 3, 4] a mat.")).toEqual([]);
    expect(parseGrounding("<|box_start|>(1,2),(3,")).toEqual([]);
    expect(parseGrounding('{"bbox_2d": [1, 2, "x", 4]}')).toEqual([]);
  });

  it("lists a box that is repeated only once", () => {
    const object = '{"bbox_2d": [1, 2, 3, 4], "label": "a"}';
    expect(parseGrounding(`${object}\n${object}`)).toHaveLength(1);
  });
});

describe("readableGroundingMarkup", () => {
  it("keeps labels and shows boxes as code spans", () => {
    expect(
      readableGroundingMarkup(
        "<|object_ref_start|>cat<|object_ref_end|><|box_start|>(1, 2),(3, 4)<|box_end|> and <ref>dog</ref><box>(5,6),(7,8)</box>",
      ),
    ).toBe("cat `(1,2),(3,4)` and dog `(5,6),(7,8)`");
  });
});
