// Type-checks a small user program against the built declarations with each
// `openai` major the peer range accepts (4 to 7), as a user's project would
// see them: the package in its own node_modules, no path mapping, no
// skipLibCheck. The tests run from source against one major's types at a
// time; this catches a declaration that names a type some major lacks.
//
// Usage: node scripts/consumer-types.mjs (after `npm run build`). Majors whose
// package is not installed (see .ci/run) are reported and fail the run.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ENTRIES, specifier } from "./entries.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const modules = join(root, "node_modules");
const openaiByMajor = {
  4: join(root, ".ci/openai-legacy/node_modules/openai4"),
  5: join(root, ".ci/openai-legacy/node_modules/openai5"),
  6: join(modules, "openai"),
  7: join(modules, "openai7"),
};
// What the declarations import besides openai, and what those need in turn.
const deps = ["zod", "@opentelemetry/api", "@types/node", "undici-types"];

const program = `import OpenAI from "openai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { Recorder, Trajectory, TrajectoryGroup, type MessageOrChoice } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { currentRollout, type RecordedCompletion } from "trajectory-recorder/core";
import { TrajectoryGroupWireSchema, type TrajectoryGroupWire } from "trajectory-recorder/wire";

const recorder = new Recorder({ logprobs: true });
const openai: OpenAI = recorder.wrap(new OpenAI({ apiKey: "k" }));
export const group: Promise<TrajectoryGroup> = Promise.all([
  recorder.rollout(async (t: Trajectory) => {
    const r: ChatCompletion = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    const item: MessageOrChoice = r.choices[0]!;
    t.messages_and_choices.push(item, { role: "user", content: "again" });
    t.reward = 1;
    t.metrics.turns = 1;
  }),
]).then((ts) => new TrajectoryGroup(ts));
export const emulator = startEmulator;
export const wire: Promise<TrajectoryGroupWire> = group.then((g) =>
  TrajectoryGroupWireSchema.parse(g.toJSON()),
);
export const seen: RecordedCompletion["status"] | undefined = currentRollout() ? "complete" : undefined;
${
  // Every entry point that needs no optional peer, loaded whole: its
  // declarations must type-check too (the integrations' need their frameworks).
  ENTRIES.filter((e) => !e.peers)
    .map(
      (e, i) =>
        `import type * as entry${i} from "${specifier(e.subpath)}";\nexport type Entry${i} = typeof entry${i};`,
    )
    .join("\n")
}
`;

const tsc = join(modules, "typescript/bin/tsc");
let failed = false;
for (const [major, openai] of Object.entries(openaiByMajor)) {
  if (!existsSync(openai)) {
    console.error(`openai ${major}.x: not installed at ${openai} (bash .ci/run installs it)`);
    failed = true;
    continue;
  }
  const dir = mkdtempSync(join(tmpdir(), "tr-consumer-types-"));
  try {
    const own = join(dir, "node_modules/trajectory-recorder");
    mkdirSync(own, { recursive: true });
    cpSync(join(root, "dist"), join(own, "dist"), { recursive: true });
    cpSync(join(root, "package.json"), join(own, "package.json"));
    for (const dep of deps) {
      mkdirSync(dirname(join(dir, "node_modules", dep)), { recursive: true });
      symlinkSync(join(modules, dep), join(dir, "node_modules", dep));
    }
    symlinkSync(openai, join(dir, "node_modules/openai"));
    // The same program as an ES module and as CommonJS: each resolves its own
    // condition of the exports map (index.d.ts and index.d.cts).
    for (const file of ["esm.mts", "cjs.cts"]) writeFileSync(join(dir, file), program);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          types: ["node"],
          skipLibCheck: false,
        },
        files: ["esm.mts", "cjs.cts"],
      }),
    );
    execFileSync(process.execPath, [tsc, "-p", dir], { stdio: "inherit" });
    console.log(`openai ${major}.x: the declarations type-check (ESM and CommonJS)`);
  } catch {
    console.error(`openai ${major}.x: the declarations fail to type-check (errors above)`);
    failed = true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);
