// Mastra before 1.0 (npm installs 0.24.x on Node 20, as 1.x needs Node 22)
// builds models that forward neither logprobs nor token ids: its rollouts
// are recorded, but the check before training refuses every one of them.
// Said once per process, when an agent is wrapped, rather than discovered
// at the first training step.
import { createRequire } from "node:module";
import path from "node:path";

/** The first @mastra/core major whose models carry logprobs and token ids. */
export const FIRST_TRAINABLE_MASTRA_MAJOR = 1;

// Shared across the copies of this module (each entry point's build has one).
const WARNED = Symbol.for("trajectory-recorder.warned-untrainable-mastra");
const warned = globalThis as { [WARNED]?: boolean };

/**
 * The version of `@mastra/core` the application loads: resolved from its
 * entry script's directory, then from the working directory. Undefined when
 * neither finds it (bundled, or installed elsewhere).
 */
export function applicationMastraVersion(): string | undefined {
  const entry = process.argv[1];
  const from = [
    ...(entry ? [path.join(path.dirname(path.resolve(entry)), "noop.js")] : []),
    path.join(process.cwd(), "noop.js"),
  ];
  for (const base of from) {
    try {
      const pkg = createRequire(base)("@mastra/core/package.json") as { version?: unknown };
      if (typeof pkg.version === "string") return pkg.version;
    } catch {
      // Not installed where this base looks: try the next.
    }
  }
  return undefined;
}

/** Whether that @mastra/core version can give logprobs and token ids. */
export function mastraGivesLogprobs(version: string): boolean {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  return !Number.isInteger(major) || major >= FIRST_TRAINABLE_MASTRA_MAJOR;
}

/**
 * Warns once per process, through `logger`, when the application's
 * @mastra/core cannot give what training needs.
 */
export function warnIfUntrainableMastra(
  logger: { warn(message: string): void },
  version = applicationMastraVersion(),
): void {
  if (warned[WARNED] || version === undefined || mastraGivesLogprobs(version)) return;
  warned[WARNED] = true;
  logger.warn(
    `trajectory-recorder: recordMastraAgent: @mastra/core ${version} forwards neither logprobs nor token ids, so its rollouts are recorded but cannot be trained on (their logs say what is missing, and the check before training refuses them). Use @mastra/core ${FIRST_TRAINABLE_MASTRA_MAJOR}.x or newer, which needs Node 22 (said once per process).`,
  );
}
