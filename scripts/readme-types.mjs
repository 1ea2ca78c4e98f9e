// Type-checks every ```ts block of the README against the built package, as a
// user's project would see it: each block is its own module in a temporary
// project whose node_modules holds the packed files (dist, package.json) and
// links to this repository's dependencies.
//
// Blocks are excerpts: some use names an earlier step of the reader's program
// would have made (`groups`, `shipper`, `agent`, ...). Those, and only those,
// are declared in the PRELUDE below with the type the README means, so the
// rest of each block is checked as written. A block that declares or imports
// a name shadows the prelude's.
//
// Usage: node scripts/readme-types.mjs (after `npm run build`); --list names the blocks only.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { tsBlocks } from "./doc-sources.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const modules = join(root, "node_modules");

const PRELUDE = `// Names the README's excerpts take from the reader's own program.
import type { Agent } from "@openai/agents";
import type { OpenAICompatibleProvider } from "@ai-sdk/openai-compatible";
import type {
  Recorder as RecorderT,
  TrainableModel as TrainableModelT,
  Trajectory as TrajectoryT,
  TrajectoryGroup as TrajectoryGroupT,
  TrajectoryShipper as TrajectoryShipperT,
} from "trajectory-recorder";

declare global {
  const OpenAI: typeof import("openai").default;
  const ChatOpenAI: typeof import("@langchain/openai").ChatOpenAI;
  const wrapLanguageModel: typeof import("ai").wrapLanguageModel;
  const recorder: RecorderT;
  const model: TrainableModelT;
  const shipper: TrajectoryShipperT;
  const group: TrajectoryGroupT;
  const groups: TrajectoryGroupT[];
  const valGroups: TrajectoryGroupT[];
  const trajectories: TrajectoryT[];
  const scenarios: { id: string; question: string }[];
  const expected: string;
  const rollout: (scenario: { id: string; question: string }) => Promise<TrajectoryT>;
  const agent: Agent;
  const provider: OpenAICompatibleProvider;
  const baseURL: string;
  const input: { messages: { role: string; content: string }[] };
}
export {};
`;

// Packages a guide's example imports but this repository does not install
// (a user's own choice of client), declared with just the shapes the example
// uses, so the rest of the block is still checked against ours.
const STUBS = `declare module "@aws-sdk/client-s3" {
  export class S3Client {
    constructor(config: { region?: string; endpoint?: string });
    send(command: object): Promise<{ Body?: { transformToString(encoding?: string): Promise<string> } }>;
  }
  type ObjectInput = { Bucket: string; Key: string; Body?: string; ContentType?: string };
  export class PutObjectCommand { constructor(input: ObjectInput); }
  export class GetObjectCommand { constructor(input: ObjectInput); }
  export class DeleteObjectCommand { constructor(input: ObjectInput); }
}
`;

// Names whose meaning depends on the block: in the LangChain excerpt, `agent`
// is a LangGraph agent (a Runnable), not the OpenAI Agents SDK's.
const BLOCK_PRELUDES = [
  {
    when: "trajectory-recorder/langchain",
    code: 'import type { Runnable } from "@langchain/core/runnables";\ndeclare const agent: Runnable;\n',
  },
];

// The README and the guides in docs/: complete blocks and excerpts alike.
const blocks = tsBlocks(root);
// --list prints the blocks it would check (FILE:LINE, one a line) and stops.
if (process.argv.includes("--list")) {
  for (const b of blocks) console.log(`${b.source}:${b.line}`);
  process.exit(0);
}
if (blocks.length === 0) {
  console.error("README.md has no ```ts block");
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "tr-readme-types-"));
try {
  const nm = join(dir, "node_modules");
  mkdirSync(nm);
  // Every dependency of this repository, as links; the package itself as files.
  for (const name of readdirSync(modules)) {
    if (name.startsWith(".") || name === "trajectory-recorder") continue;
    symlinkSync(join(modules, name), join(nm, name));
  }
  const own = join(nm, "trajectory-recorder");
  mkdirSync(own);
  if (!existsSync(join(root, "dist/index.d.ts"))) {
    console.error("dist/ is missing: run `npm run build` first");
    process.exit(1);
  }
  cpSync(join(root, "dist"), join(own, "dist"), { recursive: true });
  cpSync(join(root, "package.json"), join(own, "package.json"));

  writeFileSync(join(dir, "prelude.mts"), PRELUDE);
  writeFileSync(join(dir, "stubs.d.ts"), STUBS);
  const files = ["prelude.mts", "stubs.d.ts"];
  for (const [i, block] of blocks.entries()) {
    const file = `block-${String(i + 1).padStart(2, "0")}-${block.source.replace(/[/.]/g, "_")}-line-${block.line}.mts`;
    // `export {}` makes every block a module, so top-level await works and its
    // names stay its own.
    const local = BLOCK_PRELUDES.filter((p) => block.code.includes(`"${p.when}"`))
      .map((p) => p.code)
      .join("");
    writeFileSync(join(dir, file), `${local}${block.code}\nexport {};\n`);
    files.push(file);
  }
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
        // Our own declarations are checked without skipLibCheck by
        // consumer-types.mjs; here the frameworks' would only add noise.
        skipLibCheck: true,
      },
      files,
    }),
  );
  execFileSync(process.execPath, [join(modules, "typescript/bin/tsc"), "-p", dir], {
    stdio: "inherit",
  });
  console.log(`README: ${blocks.length} TypeScript blocks type-check against the built package`);
} catch {
  console.error(
    "README: a TypeScript block fails to type-check (errors above; the file name gives the README line)",
  );
  process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
