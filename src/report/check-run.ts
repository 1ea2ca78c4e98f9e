// What renderReport reads, checked before it draws anything: a run of the
// wrong shape is an InvalidArgumentError naming the field (`run.steps[0].groups`),
// never a TypeError from deep inside the renderer.
import { z } from "zod";
import { InvalidArgumentError } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";

const finite = z.number().refine(Number.isFinite, "expected a finite number");
const trajectory = z.looseObject({
  messages_and_choices: z.array(z.unknown()),
  reward: finite,
  metadata: z.record(z.string(), z.unknown()).optional(),
  metrics: z.record(z.string(), z.unknown()).optional(),
});
const step = z.looseObject({
  step: finite,
  split: z.string(),
  groups: z.array(z.looseObject({ trajectories: z.array(trajectory) })),
  scaleRewards: z.boolean().optional(),
  advantageBalance: finite.optional(),
});
const training = z.looseObject({
  step: finite,
  job: z
    .looseObject({
      id: z.string(),
      status: z.string(),
      createdAt: z.string().nullish(),
      startedAt: z.string().nullish(),
      endedAt: z.string().nullish(),
      error: z.string().nullish(),
      groups: finite.optional(),
    })
    .optional(),
  metrics: z.record(z.string(), z.number()),
});
const production = z.looseObject({
  id: z.string(),
  session: z.string().nullable(),
  feedback: z.array(z.looseObject({})),
  trajectory: z.looseObject({ messages_and_choices: z.array(z.unknown()) }),
});
const reportRun = z.looseObject({
  title: z.string().optional(),
  subtitle: z.string().optional(),
  steps: z.array(step),
  training: z.array(training).optional(),
  production: z.array(production).optional(),
});

/** Throws {@link InvalidArgumentError} naming the first field of `run` the report cannot draw. */
export function checkReportRun(call: string, run: unknown): void {
  const parsed = reportRun.safeParse(run);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const where = issue ? formatZodPath(issue.path) : "(root)";
  const argument =
    where === "(root)" ? "run" : where.startsWith("[") ? `run${where}` : `run.${where}`;
  throw new InvalidArgumentError(
    call,
    argument,
    "",
    undefined,
    (issue?.message ?? "invalid").replace(/^Invalid input: /, ""),
  );
}
