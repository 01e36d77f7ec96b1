import { describe, expect, it } from "vitest";
import {
  answerFormatFor,
  answerFormatProblem,
  checkJsonSchema,
  responseFormatBody,
  schemaName,
  SchemaError,
} from "./answer_format";

const SCHEMA = '{"title": "Receipt fields", "type": "object", "properties": {"total": {"type": "number"}}}';

describe("the JSON schema box", () => {
  it("takes a JSON object, and names what is wrong with anything else", () => {
    expect(checkJsonSchema(SCHEMA)).toEqual({
      schema: { title: "Receipt fields", type: "object", properties: { total: { type: "number" } } },
    });
    expect(checkJsonSchema("  ")).toEqual({ error: "Paste a JSON schema, or choose another answer format." });
    expect(checkJsonSchema('{"type": "object",}')).toEqual({ error: expect.stringMatching(/^This is not JSON: /) });
    for (const notObject of ["[1]", "true", "null", '"object"']) {
      expect(checkJsonSchema(notObject)).toEqual({
        error: 'A JSON schema is an object, such as {"type": "object", "properties": {…}}.',
      });
    }
  });

  it("names the schema after its title, in the characters a name may have", () => {
    expect(schemaName({ title: "Receipt fields" })).toBe("Receipt_fields");
    expect(schemaName({ title: "x".repeat(80) })).toHaveLength(64);
    expect(schemaName({ title: "  " })).toBe("answer");
    expect(schemaName({ title: 3 })).toBe("answer");
    expect(schemaName({})).toBe("answer");
  });
});

describe("sending", () => {
  it("waits for a schema that is JSON, in JSON with a schema only", () => {
    expect(answerFormatProblem("json_schema", "{")).toMatch(
      /^Fix the JSON schema in the settings first\. This is not JSON/,
    );
    expect(answerFormatProblem("json_schema", SCHEMA)).toBeUndefined();
    expect(answerFormatProblem("json", "{")).toBeUndefined();
  });
});

describe("response_format", () => {
  it("follows the settings, else the question's own format", () => {
    expect(answerFormatFor("text")).toBeUndefined();
    expect(answerFormatFor("text", "json_object")).toBe("json_object");
    expect(answerFormatFor("json")).toBe("json_object");
    expect(answerFormatFor("json_schema", "json_object")).toBe("json_schema");
  });

  it("is a JSON object, or the schema with its name and strict", () => {
    expect(responseFormatBody("json_object", "not used")).toEqual({ type: "json_object" });
    expect(responseFormatBody("json_schema", SCHEMA)).toEqual({
      type: "json_schema",
      json_schema: {
        name: "Receipt_fields",
        schema: { title: "Receipt fields", type: "object", properties: { total: { type: "number" } } },
        strict: true,
      },
    });
    expect(() => responseFormatBody("json_schema", "{oops")).toThrow(SchemaError);
    expect(() => responseFormatBody("json_schema", "{oops")).toThrow(
      /^The JSON schema in the settings cannot be sent\. This is not JSON/,
    );
  });
});
