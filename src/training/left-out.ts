// Groups left out of training for lack of signal (their rewards all tie) are
// still rollouts of the step: `train` and the shipper's `trainEvery` log them
// under `train`, each trajectory marked in its metadata, so the service's
// history, the CLI and the report count every rollout and can tell which
// groups were not trained on.

import { PreparedGroup, prepareGroup } from "../trajectory/index.js";
import type { TrajectoryGroupWire } from "../wire/index.js";

/**
 * The trajectory metadata key and value of a group left out of training
 * because its rewards all tie (trajectory metadata is free-form, so every
 * service takes it; the emulator reads the same pair).
 */
export const LEFT_OUT_KEY = "left_out";
export const LEFT_OUT_NO_SIGNAL = "no_reward_signal";

/**
 * `group` (prepared, or its bytes in pieces) with every trajectory marked as
 * left out for lack of reward signal; read back and written again.
 */
export async function markLeftOut(
  group: PreparedGroup | readonly Uint8Array[],
  method: string,
): Promise<PreparedGroup> {
  const prepared = group instanceof PreparedGroup ? group : new PreparedGroup(group);
  const wire = prepared.toJSON() as TrajectoryGroupWire;
  for (const t of wire.trajectories)
    t.metadata = { ...(t.metadata ?? {}), [LEFT_OUT_KEY]: LEFT_OUT_NO_SIGNAL };
  const marked = await prepareGroup(wire, method);
  marked.rewardSignal = false;
  return marked;
}
