import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { call, start } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const SCHEMAS: Record<string, Record<string, unknown>> = {
  unions: {
    type: "object",
    properties: {
      note: { type: ["string", "null"], minLength: 3 },
      choice: {
        anyOf: [
          { type: "integer", minimum: 5, maximum: 6 },
          { type: "string", enum: ["x", "y"] },
        ],
      },
      flag: { oneOf: [{ type: "boolean" }, { type: "null" }] },
      level: { type: "string", enum: ["low", "high", 3] },
      fixed: { const: { a: 1 } },
    },
    required: ["note", "choice", "flag", "level", "fixed"],
    additionalProperties: false,
  },
  refs: {
    $defs: {
      color: { type: "string", enum: ["red", "blue"] },
      point: {
        type: "object",
        properties: {
          x: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
          y: { type: "integer", minimum: -3, maximum: -1 },
        },
        required: ["x", "y"],
        additionalProperties: false,
      },
    },
    type: "object",
    properties: {
      c: { $ref: "#/$defs/color" },
      pts: { type: "array", items: { $ref: "#/$defs/point" }, minItems: 2, maxItems: 4 },
    },
    required: ["c", "pts"],
  },
  definitions: {
    definitions: { size: { type: "integer", minimum: 100, maximum: 102 } },
    type: "object",
    properties: {
      s: { $ref: "#/definitions/size" },
      all: { allOf: [{ $ref: "#/definitions/size" }, { multipleOf: 2 }] },
    },
    required: ["s", "all"],
  },
  strings: {
    type: "object",
    properties: {
      name: { type: "string", minLength: 12, maxLength: 15 },
      code: { type: "string", pattern: "^[A-Z]{3}-\\d{2,4}$" },
      slug: { type: "string", pattern: "^(foo|bar)_[a-z0-9]+(-[a-z]+)?$" },
      short: { type: "string", maxLength: 2 },
      email: { type: "string", format: "email" },
      when: { type: "string", format: "date-time" },
      day: { type: "string", format: "date" },
      id: { type: "string", format: "uuid" },
    },
    required: ["name", "code", "slug", "short", "email", "when", "day", "id"],
  },
  numbers: {
    type: "object",
    properties: {
      n: { type: "integer", exclusiveMinimum: 10, exclusiveMaximum: 13 },
      m: { type: "integer", multipleOf: 5, minimum: 1, maximum: 30 },
      f: { type: "number", minimum: 0.25, maximum: 0.5 },
      g: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 0.01 },
      q: { type: "number", multipleOf: 0.25, minimum: -1, maximum: 1 },
      neg: { type: "integer", maximum: -100 },
    },
    required: ["n", "m", "f", "g", "q", "neg"],
  },
  arrays: {
    type: "object",
    properties: {
      tags: {
        type: "array",
        items: { type: "string", enum: ["a", "b", "c"] },
        uniqueItems: true,
        minItems: 2,
        maxItems: 3,
      },
      pair: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], items: false },
      none: { type: "array", maxItems: 0 },
      many: { type: "array", items: { type: "boolean" }, minItems: 5 },
    },
    required: ["tags", "pair", "none", "many"],
  },
  recursive: {
    $defs: {
      node: {
        type: "object",
        properties: {
          name: { type: "string", maxLength: 6 },
          children: { type: "array", items: { $ref: "#/$defs/node" }, maxItems: 3 },
        },
        required: ["name"],
        additionalProperties: false,
      },
    },
    $ref: "#/$defs/node",
  },
  objects: {
    type: "object",
    properties: { a: { type: "string" }, b: { type: "string" }, c: { type: "integer" } },
    dependentRequired: { a: ["b"], b: ["c"] },
    minProperties: 2,
    additionalProperties: false,
  },
};

it("generates tool-call arguments that validate against each tool's schema, across many seeds", async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const [name, parameters] of Object.entries(SCHEMAS)) {
    const validate = ajv.compile(parameters);
    for (let seed = 0; seed < 12; seed++) {
      const r = await call(emu, "POST", "/chat/completions", {
        model: "emulator/tiny",
        messages: [{ role: "user", content: "use the tool" }],
        tools: [{ type: "function", function: { name, parameters } }],
        tool_choice: { type: "function", function: { name } },
        n: 8,
        seed,
      });
      expect(r.status).toBe(200);
      for (const choice of r.json.choices) {
        const call = choice.message.tool_calls[0].function;
        expect(call.name).toBe(name);
        const args = JSON.parse(call.arguments);
        if (!validate(args)) {
          throw new Error(
            `${name} seed ${seed}: ${call.arguments} is invalid: ${ajv.errorsText(validate.errors)}`,
          );
        }
      }
    }
  }
});

it("answers 400 for a named tool_choice that is not among the tools, and for required without tools", async () => {
  const tools = [{ type: "function", function: { name: "paint", parameters: { type: "object" } } }];
  const base = { model: "emulator/tiny", messages: [{ role: "user", content: "hi" }] };
  const wrong = await call(emu, "POST", "/chat/completions", {
    ...base,
    tools,
    tool_choice: { type: "function", function: { name: "draw" } },
  });
  expect(wrong.status).toBe(400);
  expect(wrong.json.error).toMatchObject({ type: "invalid_request_error", param: "tool_choice" });
  expect(wrong.json.error.message).toMatch(/"draw".*not among.*paint/);
  const noTools = await call(emu, "POST", "/chat/completions", {
    ...base,
    tool_choice: { type: "function", function: { name: "paint" } },
    stream: true,
  });
  expect(noTools.status).toBe(400);
  const required = await call(emu, "POST", "/chat/completions", {
    ...base,
    tool_choice: "required",
  });
  expect(required.status).toBe(400);
  expect(required.json.error.param).toBe("tool_choice");
});
