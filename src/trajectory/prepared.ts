// A group serialized and checked once (see `prepareGroup`), held as the
// bytes that go on the wire.
import type { TrajectoryGroupWire } from "../wire/index.js";

/**
 * A group's wire JSON, already checked: `log` and `train` send these bytes
 * as they are. They stay in the pieces they were written in: joining 20 MB
 * into one buffer would hold the event loop for the copy. `toJSON()` gives
 * the wire object back (parsed from the bytes) for anything that wants data
 * rather than bytes.
 */
export class PreparedGroup {
  /** The group's wire JSON, UTF-8, in order. */
  readonly chunks: readonly Uint8Array[];
  readonly byteLength: number;
  /**
   * Whether the group's rewards differ (see `hasRewardSignal`), noted when it
   * was prepared from the group itself; `undefined` when read back as bytes.
   */
  rewardSignal: boolean | undefined;

  constructor(bytes: Uint8Array | readonly Uint8Array[], rewardSignal?: boolean) {
    this.rewardSignal = rewardSignal;
    this.chunks = bytes instanceof Uint8Array ? [bytes] : bytes;
    let length = 0;
    for (const chunk of this.chunks) length += chunk.byteLength;
    this.byteLength = length;
  }

  /** The bytes in one buffer (a copy when there are several pieces). */
  get bytes(): Uint8Array {
    return this.chunks.length === 1
      ? (this.chunks[0] as Uint8Array)
      : Buffer.concat(this.chunks as Uint8Array[]);
  }

  toJSON(): TrajectoryGroupWire {
    return JSON.parse(new TextDecoder().decode(this.bytes));
  }
}
