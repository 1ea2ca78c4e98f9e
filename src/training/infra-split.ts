// Rollouts marked as infrastructure failures (an upstream 5xx, a cut stream,
// a crashed tool runner: `metadata.infra_failure`) never reach a training
// job: their reward says nothing of the policy. `train` takes them out of
// their groups, trains on the rest, and logs them under `train` marked as
// left out, so the step's history counts them.
import {
  countInfraFailures,
  INFRA_FAILURE_KEY,
  infraFailureOf,
  PreparedGroup,
  prepareGroup,
} from "../trajectory/index.js";
import type { TrajectoryGroupWire } from "../wire/index.js";
import { LEFT_OUT_KEY } from "./left-out.js";

/** The `left_out` value of a trajectory left out of training as an infrastructure failure. */
export const LEFT_OUT_INFRA_FAILURE = "infra_failure";

/**
 * The step metric `train` reports the trajectories it left out as
 * infrastructure failures under (beside ART's `data/step_num_trajectories`).
 */
export const INFRA_FAILURES_METRIC = "data/step_num_infra_failures";

/** The groups `train` sends and logs once the infrastructure failures are out. */
export interface InfraSplit {
  /** Each group's bytes without its marked trajectories; `undefined`: none of it is left. */
  kept: (readonly Uint8Array[] | undefined)[];
  /** The marked trajectories, one group per group that held any, each marked as left out. */
  leftOut: (readonly Uint8Array[])[];
  /** How many trajectories were marked. */
  count: number;
}

const NEEDLE = Buffer.from(`"${INFRA_FAILURE_KEY}"`);

/**
 * Takes the trajectories marked as infrastructure failures out of `groups`
 * (each in the pieces of its wire JSON). A group is read back only when its
 * bytes hold the key at all, so the common case costs one byte search.
 */
export async function splitInfraFailures(
  groups: readonly (readonly Uint8Array[])[],
  method: string,
): Promise<InfraSplit> {
  const out: InfraSplit = { kept: [], leftOut: [], count: 0 };
  for (const chunks of groups) {
    if (!mayHold(chunks)) {
      out.kept.push(chunks);
      continue;
    }
    const wire = new PreparedGroup(chunks).toJSON() as TrajectoryGroupWire;
    const count = countInfraFailures(wire.trajectories);
    if (count === 0) {
      out.kept.push(chunks);
      continue;
    }
    out.count += count;
    const healthy = wire.trajectories.filter((t) => infraFailureOf(t) === undefined);
    const marked = wire.trajectories
      .filter((t) => infraFailureOf(t) !== undefined)
      .map((t) => ({
        ...t,
        metadata: { ...(t.metadata ?? {}), [LEFT_OUT_KEY]: LEFT_OUT_INFRA_FAILURE },
      }));
    out.kept.push(
      healthy.length > 0
        ? (await prepareGroup({ ...wire, trajectories: healthy }, method)).chunks
        : undefined,
    );
    const left = { ...wire, trajectories: marked, exceptions: [] };
    out.leftOut.push((await prepareGroup(left, method)).chunks);
  }
  return out;
}

/** Whether the key appears in the bytes, a piece boundary included. */
function mayHold(chunks: readonly Uint8Array[]): boolean {
  const n = NEEDLE.length;
  let tail: Uint8Array = new Uint8Array(0);
  for (const chunk of chunks) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (buf.indexOf(NEEDLE) >= 0) return true;
    if (tail.length > 0 && Buffer.concat([tail, buf.subarray(0, n - 1)]).indexOf(NEEDLE) >= 0)
      return true;
    tail = buf.subarray(Math.max(0, buf.length - (n - 1)));
  }
  return false;
}
