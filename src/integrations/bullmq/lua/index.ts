// The Redis scripts of the BullMQ integration, one `.lua` file each, named
// `<what>.<n>-keys.lua` after the number of KEYS it takes. The build inlines
// them as text (tsup's and esbuild's `text` loader, vitest's plugin in
// vitest.config.ts, `scripts/lua-hooks.mjs` under tsx); `runScript` checks
// each call passes the count its file names.
import type { Redis } from "ioredis";
import batchClaim from "./batch-claim.13-keys.lua";
import batchFinish from "./batch-finish.9-keys.lua";
import batchUncertain from "./batch-uncertain.4-keys.lua";
import expireAdopt from "./expire-adopt.5-keys.lua";
import expireSweep from "./expire-sweep.7-keys.lua";
import groupFinal from "./group-final.2-keys.lua";
import groupLost from "./group-lost.4-keys.lua";
import groupStore from "./group-store.7-keys.lua";
import handoffAgain from "./handoff-again.5-keys.lua";
import handoffConfirm from "./handoff-confirm.5-keys.lua";
import handoffRecover from "./handoff-recover.3-keys.lua";
import handoffRefused from "./handoff-refused.4-keys.lua";
import handoffTake from "./handoff-take.10-keys.lua";
import lockRelease from "./lock-release.1-key.lua";
import lockRenew from "./lock-renew.1-key.lua";
import progressMarks from "./progress-marks.1-key.lua";
import rerunDone from "./rerun-done.5-keys.lua";
import stepRaise from "./step-raise.2-keys.lua";
import storeAppend from "./store-append.6-keys.lua";
import storeDrop from "./store-drop.8-keys.lua";
import storeProgress from "./store-progress.1-key.lua";
import storePut from "./store-put.6-keys.lua";

/** A Redis script and the number of KEYS it takes. */
export interface LuaScript {
  readonly name: string;
  readonly keys: number;
  readonly source: string;
}

function script(file: string, source: string): LuaScript {
  const m = /^(.+)\.(\d+)-keys?\.lua$/.exec(file);
  if (!m) throw new Error(`Lua script ${file}: the name must end in .<n>-keys.lua`);
  return { name: m[1] as string, keys: Number(m[2]), source };
}

export const LUA = {
  batchClaim: script("batch-claim.13-keys.lua", batchClaim),
  batchFinish: script("batch-finish.9-keys.lua", batchFinish),
  batchUncertain: script("batch-uncertain.4-keys.lua", batchUncertain),
  expireAdopt: script("expire-adopt.5-keys.lua", expireAdopt),
  expireSweep: script("expire-sweep.7-keys.lua", expireSweep),
  groupFinal: script("group-final.2-keys.lua", groupFinal),
  groupLost: script("group-lost.4-keys.lua", groupLost),
  groupStore: script("group-store.7-keys.lua", groupStore),
  handoffAgain: script("handoff-again.5-keys.lua", handoffAgain),
  handoffConfirm: script("handoff-confirm.5-keys.lua", handoffConfirm),
  handoffRecover: script("handoff-recover.3-keys.lua", handoffRecover),
  handoffRefused: script("handoff-refused.4-keys.lua", handoffRefused),
  handoffTake: script("handoff-take.10-keys.lua", handoffTake),
  lockRelease: script("lock-release.1-key.lua", lockRelease),
  lockRenew: script("lock-renew.1-key.lua", lockRenew),
  progressMarks: script("progress-marks.1-key.lua", progressMarks),
  rerunDone: script("rerun-done.5-keys.lua", rerunDone),
  stepRaise: script("step-raise.2-keys.lua", stepRaise),
  storeAppend: script("store-append.6-keys.lua", storeAppend),
  storeDrop: script("store-drop.8-keys.lua", storeDrop),
  storeProgress: script("store-progress.1-key.lua", storeProgress),
  storePut: script("store-put.6-keys.lua", storePut),
} as const;

/** Runs `script` with its KEYS and ARGV; a KEYS count other than its file's is a bug, thrown. */
export function runScript(
  client: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[] = [],
): Promise<unknown> {
  if (keys.length !== script.keys) {
    return Promise.reject(
      new Error(`Lua script ${script.name} takes ${script.keys} KEYS, was given ${keys.length}.`),
    );
  }
  return client.eval(script.source, script.keys, ...keys, ...args.map(String));
}
