// Loads the built package through its exports map, as a user's ESM and
// CommonJS code would, and checks that the entry points resolve.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { ENTRIES, specifier } from "./entries.mjs";

const require = createRequire(import.meta.url);
// Every entry point of scripts/entries.mjs loads, as ESM and as CommonJS, and
// exports something.
for (const { subpath } of ENTRIES) {
  const name = specifier(subpath);
  for (const mod of [await import(name), require(name)])
    assert.ok(Object.keys(mod).length > 0, `${name} loads and exports names`);
}
const esm = await import("trajectory-recorder");
const cjs = require("trajectory-recorder");
for (const mod of [esm, cjs]) {
  assert.equal(typeof mod.TrainingClient, "function", "TrainingClient is exported");
  assert.equal(typeof mod.Recorder, "function", "Recorder is exported");
}
// The ESM and CommonJS builds share one current rollout (a global store), so
// an integration loaded through require() sees a rollout started from import.
await new esm.Recorder().rollout(() => {
  assert.ok(cjs.currentRollout(), "a rollout started in ESM is current in CommonJS");
});

// A client wrapped by the CommonJS build records into a rollout the ESM build
// runs, and knows it for a rollout of its own: a call still open when the
// rollout ends is said in its logs.
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    const message = { role: "assistant", content: "hello" };
    const choice = { index: 0, finish_reason: "stop", logprobs: null, message };
    res.end(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [choice],
      }),
    );
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const OpenAI = require("openai");
const client = new cjs.Recorder().wrap(
  new OpenAI({ apiKey: "k", baseURL: `http://127.0.0.1:${server.address().port}/v1` }),
);
const hi = [{ role: "user", content: "hi" }];
let open;
const t = await new esm.Recorder().rollout(async () => {
  await client.chat.completions.create({ model: "m", messages: hi });
  open = client.chat.completions.create({ model: "unawaited", messages: hi });
});
await open;
server.close();
assert.equal(t.messages_and_choices.length, 2, "the CommonJS-wrapped call is recorded");
assert.deepEqual(
  t.logs,
  ["a completion (unawaited) had not finished when the rollout ended: left out of the trajectory"],
  "the CommonJS copy recognises the ESM copy's rollout state",
);
const emulatorEsm = await import("trajectory-recorder/emulator");
assert.equal(typeof emulatorEsm.startEmulator, "function", "startEmulator is exported");
assert.equal(typeof require("trajectory-recorder/emulator").startEmulator, "function");
// The wire schemas and the plugin core have subpaths of their own; the root
// keeps neither the schemas nor the library's plumbing.
const wireEsm = await import("trajectory-recorder/wire");
assert.equal(typeof wireEsm.TrajectoryGroupWireSchema.parse, "function", "wire schemas exported");
assert.equal(typeof require("trajectory-recorder/wire").ModelSchema.parse, "function");
const coreEsm = await import("trajectory-recorder/core");
assert.equal(coreEsm.Recorder, esm.Recorder, "core and root share one Recorder");
assert.equal(typeof require("trajectory-recorder/core").currentRollout, "function");
await new esm.Recorder().rollout(() => {
  assert.ok(coreEsm.currentRollout(), "a rollout of the root is current in core");
});
for (const name of ["ModelSchema", "abortableSleep", "toWireGroups", "DEFAULT_SEND_CHECK"])
  assert.equal(esm[name], undefined, `${name} is not exported from the root`);
const bullmqEsm = await import("trajectory-recorder/bullmq");
assert.equal(typeof bullmqEsm.RolloutWorker, "function", "RolloutWorker is exported");
assert.equal(typeof require("trajectory-recorder/bullmq").TrainingCoordinator, "function");
// The new entry points, and one error family across every copy: each entry
// point's CommonJS build carries its own copy of the classes, so instanceof
// fails across them where isInstance() (a Symbol.for mark) does not.
const reportEsm = await import("trajectory-recorder/report");
assert.equal(typeof reportEsm.writeReport, "function", "writeReport is exported");
assert.equal(typeof require("trajectory-recorder/report").renderReport, "function");
const errorEntries = [
  ["root", esm, cjs],
  ["errors", await import("trajectory-recorder/errors"), require("trajectory-recorder/errors")],
  ["core", coreEsm, require("trajectory-recorder/core")],
  ["bullmq", bullmqEsm, require("trajectory-recorder/bullmq")],
];
const errorClasses = (mod) =>
  Object.entries(mod).filter(([, v]) => typeof v === "function" && v.prototype instanceof Error);
const allErrors = errorEntries.flatMap(([name, m, c]) => [
  ...errorClasses(m).map(([k, v]) => [`${name} ESM ${k}`, v]),
  ...errorClasses(c).map(([k, v]) => [`${name} CJS ${k}`, v]),
]);
assert.ok(allErrors.length >= 60, `error classes found: ${allErrors.length}`);
const bases = errorEntries
  .flatMap(([, m, c]) => [m, c])
  .map((m) => m.TrajectoryRecorderError)
  .filter(Boolean);
for (const [where, Class] of allErrors) {
  const e = Object.create(Class.prototype);
  for (const Base of bases) {
    assert.ok(Base.isInstance(e), `${where} is a TrajectoryRecorderError of every copy`);
    assert.ok(e instanceof Base, `${where} instanceof TrajectoryRecorderError of every copy`);
  }
  // The same class from every other copy says yes; other classes say no.
  for (const [, Other] of allErrors) {
    const same = Other.name === Class.name;
    if (same) assert.ok(Other.isInstance(e), `${where}: isInstance across copies`);
  }
}
const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  assert.fail("did not throw");
};
// Class names as written: the bundler renames a class that refers to itself
// in a static block (`_InvalidArgumentError`) unless told to keep names.
for (const [where, Class] of allErrors)
  assert.equal(Class.name, where.split(" ").at(-1), `${where}'s constructor.name`);
// Every other exported class too (the build keeps no names; see class-name.ts).
const storeEntry = [
  "store",
  await import("trajectory-recorder/store"),
  require("trajectory-recorder/store"),
];
for (const [name, m, c] of [...errorEntries, storeEntry])
  for (const [format, mod] of [
    ["ESM", m],
    ["CJS", c],
  ])
    for (const [key, value] of Object.entries(mod))
      if (typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value)))
        assert.equal(value.name, key, `${name} ${format} ${key}'s name`);
for (const e of [thrown(() => esm.rankRewards(null)), thrown(() => cjs.rankRewards(null))])
  assert.equal(e.constructor.name, e.name, `${e.name}'s constructor.name`);
for (const value of [new Error("x"), new TypeError("x"), {}, null, "x"])
  for (const [where, Class] of allErrors)
    assert.equal(Class.isInstance(value), false, `${where}.isInstance(a foreign value)`);
// Errors the built package really throws, checked by the other format's base.
const errorsCjs = require("trajectory-recorder/errors");
for (const e of [
  thrown(() => esm.rankRewards(null)),
  thrown(() => new esm.TrainingClient({ apiKey: "k", baseURL: "localhost:1" })),
  thrown(() => cjs.Trajectory.fromJSON({ reward: "high" })),
  thrown(() => new bullmqEsm.RolloutProducer({})),
]) {
  assert.ok(cjs.TrajectoryRecorderError.isInstance(e), `${e.name} from the CJS base`);
  assert.ok(errorsCjs.TrajectoryRecorderError.isInstance(e), `${e.name} from errors CJS`);
}
const notFound = new errorsCjs.NotFoundError({ method: "GET", path: "/x" }, 404, {}, new Headers());
assert.ok(esm.APIError.isInstance(notFound), "a CJS NotFoundError is an ESM APIError");
assert.ok(!(notFound instanceof esm.APIError), "(where instanceof says no)");
console.log(`smoke ok on Node ${process.version}`);

// With --pack: the package as npm would publish it (`npm pack`, which runs
// prepack), installed into an empty project, its bin run through npx.
if (process.argv.includes("--pack")) {
  const { execFileSync } = await import("node:child_process");
  const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const root = new URL("..", import.meta.url).pathname;
  const dir = mkdtempSync(join(tmpdir(), "tr-pack-"));
  try {
    const npm = (args, cwd) =>
      execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    const tarball = npm(["pack", "--silent", "--pack-destination", dir], root)
      .trim()
      .split("\n")
      .at(-1);
    writeFileSync(join(dir, "package.json"), '{"name":"pack-smoke","private":true}\n');
    npm(
      ["install", "--no-audit", "--no-fund", "--prefer-offline", `./${tarball}`, "openai@^6"],
      dir,
    );
    const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
    const run = (args) => npm(["exec", "--", "trajectory-recorder", ...args], dir);
    assert.equal(run(["--version"]).trim(), version, "npx trajectory-recorder --version");
    assert.match(run(["--help"]), /^Usage: trajectory-recorder <command>/, "--help on stdout");
    const shipped = execFileSync("tar", ["tzf", join(dir, tarball)], { encoding: "utf8" });
    for (const file of ["package/LICENSE", "package/dist/cli.js", "package/dist/index.cjs"])
      assert.ok(shipped.includes(file), `${file} is in the tarball`);
    assert.ok(!/package\/src\/.*\.ts/.test(shipped), "no TypeScript sources in the tarball");
    console.log(`pack smoke ok: ${tarball} installs and its bin runs`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
