// The whole production loop, offline: simulated users ask the chat service
// questions and rate each answer thumbs up when it says what they wanted;
// every K feedback events the trainer builds SFT-from-best rows and replayed
// RL groups from the store, trains on the emulator, and the service switches
// to the new checkpoint. Each round prints how satisfied the users were.
//
//   npx tsx examples/production/loop.ts [--rounds 6] [--users 24] [--every 16]
//     [--flaky 0.1] [--seed 1] [--store DIR]
import { parseArgs } from "node:util";
import { mulberry32, startChatService } from "./service.js";
import { startTrainer } from "./trainer.js";
import { converse, rate } from "./users.js";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "6" },
    users: { type: "string", default: "24" },
    every: { type: "string", default: "16" },
    flaky: { type: "string", default: "0.1" },
    seed: { type: "string", default: "1" },
    store: { type: "string" },
  },
});
const whole = (name: "rounds" | "users" | "every" | "seed") => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} must be a whole number of at least 1; got ${values[name]}.`);
  return n;
};
const flakyRate = Number(values.flaky);
if (!(flakyRate >= 0 && flakyRate < 1))
  throw new Error(`--flaky must be a fraction from 0 to below 1; got ${values.flaky}.`);
const rounds = whole("rounds");
const users = whole("users");
const seed = whole("seed");
const random = mulberry32(seed);

const service = await startChatService({ storeDir: values.store, flakyRate, seed });
const trainer = await startTrainer({ service, every: whole("every") });
const satisfaction: number[] = [];
try {
  for (let r = 1; r <= rounds; r++) {
    const step = await trainer.model.getStep();
    const results = await Promise.all(
      Array.from({ length: users }, (_, i) => user(`r${r}-user-${i + 1}`)),
    );
    const pleased = results.filter(Boolean).length;
    satisfaction.push(pleased / users);
    console.log(
      `round ${r}: ${pleased} of ${users} users got the answer they wanted (${Math.round((100 * pleased) / users)}%), served by step ${step}`,
    );
    await trainer.check();
  }
  const last = trainer.rounds.at(-1);
  console.log(
    `${service.infraFailures()} chat call(s) failed on the way (503, retried); the sessions they hit were counted and left out of training.`,
  );
  console.log(
    JSON.stringify({
      satisfaction,
      trainings: trainer.rounds.length,
      step: last?.step ?? 0,
      infra_failures: last?.infraFailures ?? 0,
      store: service.storeDir,
    }),
  );
} finally {
  await service.close();
}

/** One user: a question, the answer, and (most users) a thumb. */
async function user(session: string): Promise<boolean> {
  const c = await converse(service, session, random);
  if (random() < 0.9) await rate(c);
  return c.pleased;
}
