// The whole production loop, offline: simulated users ask the chat service
// questions and rate each answer thumbs up when it says what they wanted;
// every K feedback events the trainer builds SFT-from-best rows and replayed
// RL groups from the store, trains on the emulator, and the service switches
// to the new checkpoint. Each round prints how satisfied the users were.
//
//   npx tsx examples/production/loop.ts [--rounds 6] [--users 24] [--every 16]
//     [--flaky 0.1] [--seed 1] [--store DIR]
import { parseArgs } from "node:util";
import { type ChatAnswer, mulberry32, startChatService } from "./service.js";
import { startTrainer } from "./trainer.js";

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

// What each user asks, and the word an answer must say to please them. The
// emulator's model speaks 24 words; these are among them.
const QUESTIONS: [string, string][] = [
  ["What colour is a banana?", "yellow"],
  ["What colour is a cherry?", "red"],
  ["Which animal barks?", "dog"],
  ["How many wings does a bird have?", "two"],
  ["Which pet lives in a bowl of water?", "fish"],
  ["Is a grape a fruit?", "yes"],
];

const service = await startChatService({ storeDir: values.store, flakyRate, seed });
const trainer = await startTrainer({ service, every: whole("every") });
const satisfaction: number[] = [];
try {
  for (let r = 1; r <= rounds; r++) {
    const step = await trainer.model.getStep();
    const results = await Promise.all(
      Array.from({ length: users }, (_, i) => converse(`r${r}-user-${i + 1}`)),
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

/** One conversation: a question, the answer, a thumb (most users rate). */
async function converse(session: string): Promise<boolean> {
  const [question, wanted] = QUESTIONS[Math.floor(random() * QUESTIONS.length)] as [string, string];
  const rates = random() < 0.9;
  const answer = (await post(`${service.url}/chat`, { session, message: question })) as ChatAnswer;
  const pleased = answer.answer.toLowerCase().split(/\s+/).includes(wanted);
  if (rates) await post(answer.feedback_url, { reward: pleased ? 1 : 0 });
  await post(`${service.url}/end`, { session });
  return pleased;
}

async function post(url: string, body: unknown): Promise<unknown> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!r.ok)
    throw new Error(`POST ${new URL(url).pathname} answered ${r.status}: ${await r.text()}`);
  return r.json();
}
