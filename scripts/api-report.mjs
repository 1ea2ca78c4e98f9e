// The API reports: one file per entry point in api/, written by API Extractor
// from the built declarations (dist/*.d.ts), so every change of the public
// surface shows as a diff of api/*.api.md in review.
//
//   node scripts/api-report.mjs           check: fails when the built API differs
//                                         from a report, or an export has no doc comment
//   node scripts/api-report.mjs --update  rewrite the reports from the build
//   ... --root DIR                        for the package in DIR instead of this one
//
// Both need `npm run build` first (`npm run api:check` / `npm run api:update`
// build and then run this). An entry point added to package.json "exports"
// gets its report on the next --update; the check fails until it has one.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Extractor, ExtractorConfig, ExtractorLogLevel } from "@microsoft/api-extractor";

// --root DIR: another package (the tests run this on small fixtures).
const args = process.argv.slice(2);
const rootArg = args.indexOf("--root");
const root =
  rootArg >= 0
    ? resolve(args[rootArg + 1])
    : resolve(dirname(fileURLToPath(import.meta.url)), "..");
const update = args.includes("--update");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const reportFolder = join(root, "api");

// Every entry point of the exports map with declarations: "." is the package's
// name, "./wire" its name with "-wire", and so on.
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === "object" && target.import?.types)
  .map(([subpath, target]) => ({
    subpath: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
    report: subpath === "." ? pkg.name : `${pkg.name}-${subpath.slice(2)}`,
    dts: join(root, target.import.types),
    js: target.import.default ? join(root, target.import.default) : undefined,
    isRoot: subpath === ".",
  }));

// The root's bounds (docs/development.md, "Entry points"): a reader takes it in
// at a glance, and every type its declarations use is one it exports.
const ROOT_MAX_NAMES = 100;
const ROOT_MAX_VALUES = 40;

// A type declared once, low, and re-listed in the namespace of the class that
// owns it (`export declare namespace Trajectory { export type { TrajectoryWire } }`):
// API Extractor takes the re-list as exported but leaves the declaration out of
// the report (rushstack#2145), so a change to its shape would show in no diff.
// The re-list is accepted when some entry point's report declares the name.
// (API Extractor prints the type-only form as `export export type { ... }`.)
const RELIST = /^\s+(?:export\s+)+(?:type\s+)?\{([^}]*)\}/gm;
const DECLARED =
  /^export (?:declare )?(?:abstract )?(?:class|function|const|let|var|enum|interface|type|namespace) (\w+)/gm;

/** Names re-listed in a namespace of a report that no report declares. */
function unreviewedRelists(reports) {
  const declared = new Set();
  for (const text of reports.values()) for (const m of text.matchAll(DECLARED)) declared.add(m[1]);
  const problems = [];
  for (const [subpath, text] of reports)
    for (const m of text.matchAll(RELIST))
      for (const name of m[1].split(",").map((n) => n.trim().replace(/^type\s+/, "")))
        if (name && !declared.has(name))
          problems.push(
            `${subpath} re-lists "${name}" in a namespace, but no entry point's report declares it: export it from the entry point of its folder (e.g. trajectory-recorder/wire) so its shape is reviewed`,
          );
  return problems;
}

/** What breaks the root's bounds in its report's text (and its built module's values). */
async function rootProblems(entry, reportText) {
  const problems = [];
  for (const m of reportText.matchAll(/The symbol "(\w+)" needs to be exported/g))
    problems.push(
      `${entry.subpath} uses the type "${m[1]}" without exporting it (ae-forgotten-export): export it, or declare it in the namespace of the root name that uses it`,
    );
  const names = new Set();
  for (const m of reportText.matchAll(DECLARED)) names.add(m[1]);
  if (names.size > ROOT_MAX_NAMES)
    problems.push(
      `${entry.subpath} exports ${names.size} names, more than ${ROOT_MAX_NAMES}: move some to another entry point or into a namespace`,
    );
  // Values as a program sees them (a class exported as a type only is not one).
  if (entry.js && existsSync(entry.js)) {
    const values = Object.keys(await import(pathToFileURL(entry.js).href)).length;
    if (values > ROOT_MAX_VALUES)
      problems.push(
        `${entry.subpath} exports ${values} values, more than ${ROOT_MAX_VALUES}: move some to another entry point`,
      );
  }
  return problems;
}

const missing = entries.filter((e) => !existsSync(e.dts));
if (missing.length > 0) {
  console.error(
    `api: ${missing.map((e) => e.dts).join(", ")} missing: run \`npm run build\` first`,
  );
  process.exit(1);
}
// A build older than the sources would check yesterday's API.
const newest = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith(".ts"))
    .reduce((t, d) => Math.max(t, statSync(join(d.parentPath ?? d.path, d.name)).mtimeMs), 0);
const built = Math.min(...entries.map((e) => statSync(e.dts).mtimeMs));
if (!update && existsSync(join(root, "src")) && newest(join(root, "src")) > built) {
  console.error("api: src/ changed after the last build: run `npm run build` first");
  process.exit(1);
}
mkdirSync(reportFolder, { recursive: true });
const temp = mkdtempSync(join(tmpdir(), "tr-api-report-"));

// What fails the check besides a changed report: an export without a doc
// comment (ae-undocumented), and any other error of API Extractor. Release
// tags (@public, @beta) are not used: whatever an entry point exports is public.
const messages = {
  compilerMessageReporting: { default: { logLevel: "error" } },
  extractorMessageReporting: {
    default: { logLevel: "error", addToApiReportFile: false },
    "ae-missing-release-tag": { logLevel: "none" },
    // Sorted out in messageCallback: an export without a doc comment fails,
    // an undocumented member is only marked "(undocumented)" in the report.
    "ae-undocumented": { logLevel: "warning", addToApiReportFile: false },
    // Types the API uses that the entry point does not export (internal
    // helper types, zod schemas behind an exported type): shown in the
    // report, where a new one is part of the reviewed diff.
    "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
    // TypeDoc checks {@link} targets (`npm run docs`), resolving member
    // names inside their class as editors do; API Extractor would not.
    "ae-unresolved-link": { logLevel: "none" },
  },
  // TSDoc syntax the project's comments use freely (`@example` bodies without
  // fences, `{@link X}` to names in other modules): only the API's shape and
  // its documentation are checked, not TSDoc's stricter grammar.
  tsdocMessageReporting: { default: { logLevel: "none" } },
};

let failed = 0;
const seen = new Set();
const reports = new Map();
try {
  for (const entry of entries) {
    const reportFileName = `${entry.report}.api.md`;
    seen.add(reportFileName);
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: root,
        mainEntryPointFilePath: entry.dts,
        bundledPackages: [],
        compiler: {
          overrideTsconfig: {
            compilerOptions: {
              target: "es2022",
              // The package runs on Node: without the DOM's globals, API
              // Extractor need not rename our History to History_2.
              lib: ["es2023"],
              module: "nodenext",
              moduleResolution: "nodenext",
              strict: true,
              skipLibCheck: true,
              types: ["node"],
            },
            files: [entry.dts],
          },
        },
        apiReport: {
          enabled: true,
          reportFileName,
          reportFolder,
          reportTempFolder: temp,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        newlineKind: "lf",
        messages,
      },
      configObjectFullPath: join(root, "api", "api-extractor.json"),
      packageJsonFullPath: join(root, "package.json"),
    });
    // Errors fail the run; warnings are shown; the rest (progress) is quiet.
    const problems = [];
    const hadReport = existsSync(join(reportFolder, reportFileName));
    const result = Extractor.invoke(config, {
      localBuild: update,
      messageCallback(message) {
        message.handled = true;
        // A declaration at the top level of the .d.ts starts in column 1;
        // members are indented.
        if (message.messageId === "ae-undocumented") {
          if (message.sourceFileColumn === 1)
            problems.push(message.formatMessageWithLocation(root));
        } else if (message.logLevel === ExtractorLogLevel.Error)
          problems.push(message.formatMessageWithLocation(root));
        else if (
          message.logLevel === ExtractorLogLevel.Warning &&
          !String(message.messageId).startsWith("console-api-report")
        )
          console.warn(`  ${entry.subpath}: ${message.formatMessageWithLocation(root)}`);
      },
    });
    const written = join(update ? reportFolder : temp, reportFileName);
    if (existsSync(written)) reports.set(entry.subpath, readFileSync(written, "utf8"));
    if (entry.isRoot && existsSync(written))
      problems.push(...(await rootProblems(entry, readFileSync(written, "utf8"))));
    for (const p of problems) console.error(`  ${p}`);
    // result.succeeded is not used: outside a local build API Extractor counts
    // every warning (an undocumented member among them) as a failure.
    if (!update && !hadReport) {
      console.error(
        `${entry.subpath}: api/${reportFileName} is missing: run \`npm run api:update\``,
      );
      failed++;
      continue;
    }
    const changed = result.apiReportChanged && !update;
    if (problems.length > 0 || changed) {
      failed++;
      if (changed) {
        // The difference itself, report (-) against the build (+).
        try {
          execFileSync(
            "git",
            [
              "diff",
              "--no-index",
              "--no-color",
              join(reportFolder, reportFileName),
              join(temp, reportFileName),
            ],
            { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" },
          );
        } catch (error) {
          console.error(error.stdout || error.message);
        }
        console.error(
          `${entry.subpath}: the built API differs from api/${reportFileName}. If the change is meant, run \`npm run api:update\` and commit the report (\`git diff api/\` shows it).`,
        );
      }
      if (problems.length > 0)
        console.error(`${entry.subpath}: ${problems.length} problem(s) above.`);
    } else {
      console.log(
        `${entry.subpath}: ${update && result.apiReportChanged ? "report updated" : "matches"} api/${reportFileName}`,
      );
    }
  }
  const relists = unreviewedRelists(reports);
  for (const p of relists) console.error(`  ${p}`);
  if (relists.length > 0) failed++;
  // A report whose entry point is gone.
  for (const file of readdirSync(reportFolder)) {
    if (!file.endsWith(".api.md") || seen.has(file)) continue;
    if (update) {
      rmSync(join(reportFolder, file));
      console.log(`api/${file}: removed (no such entry point)`);
    } else {
      console.error(`api/${file}: no entry point of package.json has this report`);
      failed++;
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
if (failed > 0) process.exit(1);
