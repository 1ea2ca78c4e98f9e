// The one list of entry points (scripts/entries.mjs) and the lists that are
// checked against it: package.json "exports", typedoc.json and tsconfig.json.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ENTRIES, entryListProblems, tsupEntries } from "../../scripts/entries.mjs";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the three checked files, edited by `edit`. */
function copy(file: string, edit: (json: any) => void): string {
  const root = mkdtempSync(join(tmpdir(), "tr-entries-"));
  dirs.push(root);
  for (const f of ["package.json", "typedoc.json", "tsconfig.json"])
    cpSync(join(repo, f), join(root, f));
  const json = JSON.parse(readFileSync(join(root, file), "utf8"));
  edit(json);
  writeFileSync(join(root, file), JSON.stringify(json));
  return root;
}

describe("the entry points", () => {
  it("agree with package.json, typedoc.json and tsconfig.json in this repository", () => {
    expect(entryListProblems(repo)).toEqual([]);
  });

  it("are what tsup builds, by output name", () => {
    expect(tsupEntries()).toMatchObject({ index: "src/index.ts", core: "src/recorder/entry.ts" });
    expect(Object.keys(tsupEntries())).toHaveLength(ENTRIES.length);
  });

  it("catch an exports map that lacks one", () => {
    const root = copy("package.json", (pkg) => {
      delete pkg.exports["./proxy"];
    });
    expect(entryListProblems(root)).toEqual([
      expect.stringContaining('package.json "exports" differs'),
    ]);
  });

  it("catch typedoc.json and tsconfig.json paths that lack one", () => {
    const typedoc = copy("typedoc.json", (t) => {
      t.entryPoints = t.entryPoints.filter((e: string) => e !== "src/proxy/index.ts");
    });
    expect(entryListProblems(typedoc)).toEqual([
      expect.stringContaining("missing src/proxy/index.ts"),
    ]);
    const paths = copy("tsconfig.json", (t) => {
      delete t.compilerOptions.paths["trajectory-recorder/wire"];
    });
    expect(entryListProblems(paths)).toEqual([expect.stringContaining("tsconfig.json")]);
  });
});
