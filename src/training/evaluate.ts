// The same scenarios answered by chosen checkpoints, logged as a split at
// each step, so a report can put the answers of two steps side by side.
import type OpenAI from "openai";
import PQueue from "p-queue";
import { type Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import type { TrainableModel } from "./model.js";

/** What a rollout of {@link evaluateCheckpoints} is given. */
export interface EvaluationContext {
  /** The checkpoint being evaluated. */
  step: number;
  /** An `openai` client whose empty `model` means this checkpoint (recorded when a recorder was given). */
  openai: OpenAI;
  /** The inference name that pins this checkpoint, for clients of your own. */
  model: string;
  /** The scenario's name, as logged in `metadata.scenario`. */
  scenario: string;
  /** Which of the scenario's rollouts at this step this is (0-based). */
  attempt: number;
}

/** Options of {@link evaluateCheckpoints}. */
export interface EvaluateCheckpointsOptions<S> {
  /** The fixed set of scenarios every checkpoint answers. */
  scenarios: readonly S[];
  /** The checkpoints to evaluate, by step (e.g. `[0, 4, 8]`). */
  steps: readonly number[];
  /**
   * One rollout of `scenario` on the checkpoint: make the calls through
   * `ctx.openai` (inside `recorder.rollout`) and return the scored trajectory.
   */
  rollout: (scenario: S, ctx: EvaluationContext) => Promise<Trajectory>;
  /** Records the calls of `ctx.openai` (your `Recorder`). */
  recorder?: TrainableModel.OpenAIWrapper;
  /**
   * The scenario's name in the report and in `metadata.scenario`. Default:
   * its `id`, `name` or `scenario` field when it has one, else its position.
   */
  name?: (scenario: S, index: number) => string;
  /** Rollouts per scenario and step. Default 1. */
  rolloutsPerScenario?: number;
  /** The split the groups are logged under. Default `"val"`. */
  split?: string;
  /** Rollouts running at once. Default 8. */
  concurrency?: number;
  /** The check run on the groups before they are logged (see `model.log`). */
  validate?: TrainableModel.GroupCheck;
  /** Stops the evaluation: no new rollout starts, and the call rejects. */
  signal?: AbortSignal;
}

/** One checkpoint's answers, as logged. */
export interface CheckpointEvaluation {
  /** The checkpoint's step. */
  step: number;
  /** The split its groups were logged under. */
  split: string;
  /** One group per scenario, in the order of `scenarios`. */
  groups: TrajectoryGroup[];
  /** Mean reward of the step's trajectories (NaN when every rollout failed). */
  meanReward: number;
  /** Mean reward per scenario name. */
  rewards: Record<string, number>;
}

const CALL = "evaluateCheckpoints(model, options)";

function defaultName(scenario: unknown, index: number): string {
  if (scenario && typeof scenario === "object")
    for (const key of ["id", "name", "scenario"]) {
      const v = (scenario as Record<string, unknown>)[key];
      if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) return String(v);
    }
  if (typeof scenario === "string") return scenario;
  return `scenario ${index + 1}`;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);

/**
 * Runs the same scenarios on each chosen checkpoint (the inference name pins
 * the step) and logs each step's groups under `split` (default `val`), one
 * group per scenario. Every trajectory carries `metadata.scenario` and
 * `metadata.checkpoint_step`, and its policy versions are the step, so the
 * report (`trajectory-recorder report`) shows the val curve and, per
 * scenario, the answers of two steps side by side. A rollout that throws is
 * kept in its group's `exceptions`; the others are still logged.
 *
 * @example
 * const results = await evaluateCheckpoints(model, {
 *   scenarios: [{ id: "apples" }, { id: "pears" }],
 *   steps: [0, 8],
 *   recorder,
 *   rollout: (s, { openai }) =>
 *     recorder.rollout(async (t) => {
 *       const res = await openai.chat.completions.create({ model: "", messages: [{ role: "user", content: `how many ${s.id}?` }] });
 *       t.reward = res.choices[0]?.message.content?.includes("3") ? 1 : 0;
 *     }),
 * });
 * for (const r of results) console.log(r.step, r.meanReward);
 */
export async function evaluateCheckpoints<S>(
  model: TrainableModel,
  options: EvaluateCheckpointsOptions<S>,
): Promise<CheckpointEvaluation[]> {
  if (!model || typeof model.inferenceName !== "function" || typeof model.log !== "function")
    throw new InvalidArgumentError(CALL, "model", "a TrainableModel", model);
  if (!options || typeof options !== "object")
    throw new InvalidArgumentError(CALL, "options", "an object", options);
  const { scenarios, steps, rollout } = options;
  if (!Array.isArray(scenarios) || scenarios.length === 0)
    throw new InvalidArgumentError(
      CALL,
      "options.scenarios",
      "a non-empty array of scenarios",
      scenarios,
    );
  if (!Array.isArray(steps) || steps.length === 0)
    throw new InvalidArgumentError(
      CALL,
      "options.steps",
      "a non-empty array of checkpoint steps",
      steps,
    );
  steps.forEach((s, i) => {
    if (!Number.isInteger(s) || s < 0)
      throw new InvalidArgumentError(
        CALL,
        `options.steps[${i}]`,
        "a step: an integer of 0 or more",
        s,
      );
  });
  if (typeof rollout !== "function")
    throw new InvalidArgumentError(
      CALL,
      "options.rollout",
      "a function (scenario, ctx) => Promise<Trajectory>",
      rollout,
    );
  const per = options.rolloutsPerScenario ?? 1;
  if (!Number.isInteger(per) || per < 1)
    throw new InvalidArgumentError(
      CALL,
      "options.rolloutsPerScenario",
      "an integer of 1 or more",
      per,
    );
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError(
      CALL,
      "options.concurrency",
      "an integer of 1 or more",
      concurrency,
    );
  const split = options.split ?? "val";
  if (typeof split !== "string" || split === "")
    throw new InvalidArgumentError(CALL, "options.split", "a non-empty string", split);
  const nameOf = options.name ?? defaultName;
  const names = scenarios.map((s, i) => {
    const n = nameOf(s, i);
    if (typeof n !== "string" || n === "")
      throw new InvalidArgumentError(
        CALL,
        `options.name(scenarios[${i}])`,
        "a non-empty string",
        n,
      );
    return n;
  });

  const results: CheckpointEvaluation[] = [];
  for (const step of steps) {
    options.signal?.throwIfAborted();
    const openai = model.openai({ recorder: options.recorder, step });
    const inference = model.inferenceName(step);
    const queue = new PQueue({ concurrency });
    const outcomes: (Trajectory | Error)[][] = scenarios.map(() => []);
    scenarios.forEach((scenario, i) => {
      for (let attempt = 0; attempt < per; attempt++)
        queue.add(async () => {
          options.signal?.throwIfAborted();
          const ctx = { step, openai, model: inference, scenario: names[i] as string, attempt };
          try {
            const t = await rollout(scenario, ctx);
            if (
              !t ||
              typeof t !== "object" ||
              !Array.isArray((t as Trajectory).messages_and_choices)
            )
              throw new InvalidArgumentError(
                CALL,
                "options.rollout(...)",
                "to resolve to a Trajectory",
                t,
              );
            t.metadata = { ...t.metadata, scenario: names[i], checkpoint_step: step };
            t.initial_policy_version ??= step;
            t.final_policy_version ??= step;
            (outcomes[i] as (Trajectory | Error)[])[attempt] = t;
          } catch (error) {
            if (options.signal?.aborted) throw error;
            (outcomes[i] as (Trajectory | Error)[])[attempt] =
              error instanceof Error ? error : new Error(String(error));
          }
        });
    });
    await queue.onIdle();
    options.signal?.throwIfAborted();
    const groups = outcomes.map(
      (items, i) =>
        new TrajectoryGroup(items, { metadata: { scenario: names[i], checkpoint_step: step } }),
    );
    const logged = groups.filter((g) => g.trajectories.length > 0);
    if (logged.length > 0)
      await model.log(logged, { split, validate: options.validate, signal: options.signal });
    const rewards: Record<string, number> = {};
    groups.forEach((g, i) => {
      rewards[names[i] as string] = mean(g.trajectories.map((t) => t.reward));
    });
    results.push({
      step,
      split,
      groups,
      meanReward: mean(groups.flatMap((g) => g.trajectories.map((t) => t.reward))),
      rewards,
    });
  }
  return results;
}
