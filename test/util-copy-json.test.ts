import { expect, it } from "vitest";
import { InvalidArgumentError } from "../src/util/argument-error.js";
import { copyJson } from "../src/util/copy-json.js";

it("copies JSON-like data deeply, so edits to the original do not reach the copy", () => {
  const original = {
    role: "assistant",
    content: [{ type: "text", text: "hi" }],
    tool_calls: [{ id: "a", function: { name: "f", arguments: "{}" } }],
    refusal: null,
    n: 1,
  };
  const copy = copyJson(original);
  expect(copy).toEqual(original);
  original.content[0]!.text = "edited";
  original.tool_calls.push({ id: "b", function: { name: "g", arguments: "{}" } });
  original.tool_calls[0]!.function.name = "renamed";
  expect(copy.content[0]!.text).toBe("hi");
  expect(copy.tool_calls).toHaveLength(1);
  expect(copy.tool_calls[0]!.function.name).toBe("f");
  expect(copyJson("text")).toBe("text");
  expect(copyJson(null)).toBeNull();
});

it("refuses what JSON.stringify refuses, naming the path, instead of overflowing the stack", () => {
  let deep: unknown = "x";
  for (let i = 0; i < 10_000; i++) deep = { n: deep };
  expect(() => copyJson({ content: deep }, "messages[2]")).toThrow(InvalidArgumentError);
  expect(() => copyJson({ content: deep }, "messages[2]")).toThrow(
    "Copying JSON data: messages[2].content.n.n.n.n.n.n.n...: expected JSON nested at most 256 levels deep, received deeper nesting.",
  );
  const cyclic: unknown[] = [1];
  cyclic.push({ back: cyclic });
  expect(() => copyJson(cyclic, "tools")).toThrow(
    "Copying JSON data: tools[1].back: expected a JSON value, received a circular reference.",
  );
  expect(() => copyJson({ a: [1, 2n] })).toThrow(
    "Copying JSON data: value.a[1]: expected a JSON value, received a BigInt.",
  );
  // biome-ignore lint/suspicious/noSparseArray: a hole before the bad item.
  expect(() => copyJson([1, , 2n])).toThrow("value[2]: expected a JSON value, received a BigInt.");
  // Nesting up to the limit is copied as it is.
  let ok: unknown = "x";
  for (let i = 0; i < 255; i++) ok = [ok];
  expect(copyJson(ok)).toEqual(ok);
});

it("calls toJSON once per value, as JSON.stringify does", () => {
  const endless = { toJSON: () => ({ toJSON: () => endless, v: 1 }) };
  expect(copyJson(endless)).toEqual(JSON.parse(JSON.stringify(endless)));
  expect(copyJson({ at: new Date(0) })).toEqual({ at: "1970-01-01T00:00:00.000Z" });
});
