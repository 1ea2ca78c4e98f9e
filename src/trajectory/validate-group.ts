// The check of a group: each trajectory as validate.ts checks it, and the
// group refused when none holds a trainable Choice.

import type { ValidationProblem } from "./errors.js";
import {
  checkOptions,
  isChoiceItem,
  isObj,
  type Obj,
  report,
  toPlain,
  trajectoryProblems,
  type ValidateOptions,
} from "./validate.js";
import type { TokenSharing } from "./validate-lineage.js";
import { groupTokenSharing } from "./validate-lineage.js";

/** Where no Choice is trainable, the check says what most likely went wrong. */
export const LIKELY_CAUSES =
  "Likely causes: the openai client was not wrapped (recorder.wrap(client) or model.openai({ recorder })), the calls were made outside recorder.rollout(), or the model that answered is not the recorder's policy (see each trajectory's logs)";
export const NO_TRAINABLE = `no trajectory holds a trainable Choice (a sampled turn with logprobs). ${LIKELY_CAUSES}`;

/** Tells whether `items` hold a Choice the trainer would learn from. */
function hasTrainable(items: unknown): boolean {
  if (!Array.isArray(items)) return false;
  for (const item of items)
    if (isObj(item) && isChoiceItem(item) && isObj(item.logprobs)) return true;
  return false;
}

function trainable(t: Obj): boolean {
  if (hasTrainable(t.messages_and_choices)) return true;
  const histories = t.additional_histories;
  if (!Array.isArray(histories)) return false;
  return histories.some((h) => isObj(h) && hasTrainable(h.messages_and_choices));
}

/** Whether any trajectory of `g` holds a Choice with logprobs, whatever else is wrong with it. */
export function holdsTrainable(g: unknown): boolean {
  const trajectories = isObj(g) ? g.trajectories : undefined;
  return Array.isArray(trajectories) && trajectories.some((t) => isObj(t) && trainable(t));
}

/** What {@link validateGroup} found. */
export interface GroupValidation {
  /** Every problem, with its path (`trajectories[2].messages_and_choices[3]...`). */
  problems: ValidationProblem[];
  /** Indexes of the trajectories with a problem: `"drop"` leaves them out. */
  badTrajectories: number[];
  /** The whole group is refused (no trainable Choice in any trajectory). */
  refused: boolean;
  /** The group's histories in tokens: how many, the splits, the prefix tokens read more than once. */
  tokens: GroupValidation.TokenSharing;
}

/** The types {@link GroupValidation} uses. */
export declare namespace GroupValidation {
  export type { TokenSharing };
}

/**
 * Checks every trajectory of a group (a `TrajectoryGroup` or its ART JSON)
 * as {@link validateTrajectory} does, and refuses a group in which no
 * trajectory holds a trainable Choice, naming the likely cause.
 *
 * @throws TrajectoryCheckError in the default `"throw"` mode.
 * @example
 * const { badTrajectories } = validateGroup(group, { mode: "drop" });
 */
export function validateGroup(g: unknown, options: ValidateOptions = {}): GroupValidation {
  checkOptions("validateGroup", options);
  const result = groupProblems(toPlain(g), options);
  report("The trajectory group", result.problems, options);
  return result;
}

/** {@link validateGroup} without reporting: what the group's check found. */
export function groupProblems(
  g: unknown,
  options: ValidateOptions = {},
  prefix = "",
): GroupValidation {
  const at = (p: string) => (prefix ? `${prefix}.${p}` : p);
  const trajectories = isObj(g) ? g.trajectories : undefined;
  if (!Array.isArray(trajectories))
    return {
      problems: [{ path: at("trajectories"), message: "expected an array of trajectories" }],
      badTrajectories: [],
      refused: true,
      tokens: { histories: 0, splits: 0, duplicatePrefixTokens: 0 },
    };
  const problems: ValidationProblem[] = [];
  const badTrajectories: number[] = [];
  let anyTrainable = false;
  trajectories.forEach((t, i) => {
    const found = trajectoryProblems(t, options, at(`trajectories[${i}]`));
    if (found.length) {
      badTrajectories.push(i);
      problems.push(...found);
    } else if (isObj(t) && trainable(t)) anyTrainable = true;
  });
  let refused = false;
  if (options.requireTrainable !== false && !anyTrainable) {
    refused = true;
    // Said once, for the group, unless every trajectory is bad already.
    if (badTrajectories.length < trajectories.length)
      problems.push({ path: prefix || "(group)", message: NO_TRAINABLE });
  }
  return { problems, badTrajectories, refused, tokens: groupTokenSharing(trajectories) };
}
