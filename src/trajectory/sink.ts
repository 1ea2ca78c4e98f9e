import type { TrajectoryGroup } from "./group.js";

/**
 * Where finished groups go: the shipper implements it, and the recorder and
 * `gatherTrajectoryGroups` accept one. `add` may be sync or async; a rejection
 * fails the gather, so nothing is lost silently.
 *
 * @example
 * const collected: TrajectoryGroup[] = [];
 * const sink: GroupSink = { add: (g) => { collected.push(g); } };
 */
export interface GroupSink {
  /** Takes a finished group (a shipper queues it for training); may return a promise to push back. */
  add(group: TrajectoryGroup): Promise<void> | void;
}
