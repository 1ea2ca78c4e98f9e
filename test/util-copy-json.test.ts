import { expect, it } from "vitest";
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
