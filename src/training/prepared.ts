// A group serialized and checked once (see `prepareGroup`), held as the
// bytes that go on the wire.
import type { TrajectoryGroupWire } from "../wire/index.js";

/**
 * A group's wire JSON, already checked: `log` and `train` send these bytes
 * as they are. `toJSON()` gives the wire object back (parsed from the bytes)
 * for anything that wants data rather than bytes.
 */
export class PreparedGroup {
  /** The group's wire JSON, UTF-8. */
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  get byteLength(): number {
    return this.bytes.byteLength;
  }

  toJSON(): TrajectoryGroupWire {
    return JSON.parse(new TextDecoder().decode(this.bytes));
  }
}
