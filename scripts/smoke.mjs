// Loads the built package through its exports map, as a user's ESM and
// CommonJS code would, and checks that the entry points resolve.
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const esm = await import("trajectory-recorder");
const cjs = require("trajectory-recorder");
for (const mod of [esm, cjs]) {
  assert.equal(typeof mod.TrainingClient, "function", "TrainingClient is exported");
  assert.equal(typeof mod.Recorder, "function", "Recorder is exported");
}
// The ESM and CommonJS builds share one current rollout (a global store), so
// an integration loaded through require() sees a rollout started from import.
await new esm.Recorder().rollout(() => {
  assert.ok(cjs.currentRollout(), "a rollout started in ESM is current in CommonJS");
});
const emulatorEsm = await import("trajectory-recorder/emulator");
assert.equal(typeof emulatorEsm.startEmulator, "function", "startEmulator is exported");
assert.equal(typeof require("trajectory-recorder/emulator").startEmulator, "function");
console.log(`smoke ok on Node ${process.version}`);
