// The emulator's W&B API picks the operation a GraphQL document asks for by
// the root field it selects, not by words found anywhere in its text.
import { describe, expect, it } from "vitest";
import { rootFields } from "../../src/emulator/wandb/graphql.js";

describe("rootFields", () => {
  it("reads the operation past fragment definitions that come first", () => {
    const query =
      "fragment Created on CreateArtifactPayload { artifact { id } } mutation CreateArtifact($input: CreateArtifactInput!) { createArtifact(input: $input) { ...Created } }";
    expect(rootFields(query)).toEqual([{ name: "createArtifact", inner: [] }]);
  });

  it("names a field by itself rather than its alias, with what it selects inside", () => {
    const query = 'query Q { p: project(name: "a{b") { r: run(name: $n) { id } } }';
    expect(rootFields(query)).toEqual([{ name: "project", inner: ["run"] }]);
  });

  it("ignores words in strings and comments", () => {
    const query = '# upsertBucket(\nquery { viewer(note: "commitArtifact(") { id } }';
    expect(rootFields(query).map((f) => f.name)).toEqual(["viewer"]);
  });

  it("reads nothing from a document without an operation", () => {
    for (const query of ["", "x".repeat(100), "{{{", "fragment F on T", ")))}}}"])
      expect(Array.isArray(rootFields(query))).toBe(true);
  });
});
