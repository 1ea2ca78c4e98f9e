// Loads the built package through its exports map, as a user's ESM and
// CommonJS code would, and checks that the entry points resolve.
import assert from "node:assert/strict";
import { createServer } from "node:http";
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

// A client wrapped by the CommonJS build records into a rollout the ESM build
// runs, and knows it for a rollout of its own: a call still open when the
// rollout ends is said in its logs.
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    const message = { role: "assistant", content: "hello" };
    const choice = { index: 0, finish_reason: "stop", logprobs: null, message };
    res.end(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [choice],
      }),
    );
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const OpenAI = require("openai");
const client = new cjs.Recorder().wrap(
  new OpenAI({ apiKey: "k", baseURL: `http://127.0.0.1:${server.address().port}/v1` }),
);
const hi = [{ role: "user", content: "hi" }];
let open;
const t = await new esm.Recorder().rollout(async () => {
  await client.chat.completions.create({ model: "m", messages: hi });
  open = client.chat.completions.create({ model: "unawaited", messages: hi });
});
await open;
server.close();
assert.equal(t.messages_and_choices.length, 2, "the CommonJS-wrapped call is recorded");
assert.deepEqual(
  t.logs,
  ["a completion (unawaited) had not finished when the rollout ended"],
  "the CommonJS copy recognises the ESM copy's rollout state",
);
const emulatorEsm = await import("trajectory-recorder/emulator");
assert.equal(typeof emulatorEsm.startEmulator, "function", "startEmulator is exported");
assert.equal(typeof require("trajectory-recorder/emulator").startEmulator, "function");
const bullmqEsm = await import("trajectory-recorder/bullmq");
assert.equal(typeof bullmqEsm.RolloutWorker, "function", "RolloutWorker is exported");
assert.equal(typeof require("trajectory-recorder/bullmq").TrainingCoordinator, "function");
console.log(`smoke ok on Node ${process.version}`);
