// Simulated users of the chat service: a few conversations of several turns,
// each answer rated thumbs up or down (or not at all) at random, through the
// signed feedback URL as the page does. Then what the store holds.
//
//   npx tsx examples/production/simulate.ts [--users 4] [--turns 3] [--seed 1] [--store DIR]
import { parseArgs } from "node:util";
import { type ChatAnswer, startChatService } from "./service.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "4" },
    turns: { type: "string", default: "3" },
    seed: { type: "string", default: "1" },
    store: { type: "string" },
  },
});
const whole = (name: "users" | "turns" | "seed") => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} must be a whole number of at least 1; got ${values[name]}.`);
  return n;
};
const users = whole("users");
const turns = whole("turns");
const random = mulberry32(whole("seed"));

const QUESTIONS = [
  "What is the capital of France?",
  "Write a haiku about rain.",
  "How do I reverse a list in Python?",
  "Tell me a joke.",
  "What is 17 times 23?",
];

const service = await startChatService({ storeDir: values.store });
try {
  await Promise.all(Array.from({ length: users }, (_, i) => converse(`user-${i + 1}`)));
  const all = service.store.list({ limit: 10_000 });
  const counts = {
    trajectories: all.length,
    rewarded: all.filter((t) => t.reward !== null).length,
    eligible: all.filter((t) => t.eligible === true).length,
    thumbs_up: all.filter((t) => t.reward === 1).length,
  };
  console.log(`store: ${service.storeDir}`);
  for (const t of all)
    console.log(
      `  ${t.id}  session ${t.session}  ${t.status}  ${t.calls} calls  reward ${t.reward ?? "-"}  ${t.feedback} feedback`,
    );
  console.log(
    `${counts.trajectories} trajectories, ${counts.rewarded} rewarded (${counts.thumbs_up} thumbs up), ${counts.eligible} eligible for training`,
  );
  console.log(JSON.stringify(counts));
} finally {
  await service.close();
}

async function converse(session: string): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    const question = QUESTIONS[Math.floor(random() * QUESTIONS.length)] as string;
    const answer = (await post(`${service.url}/chat`, {
      session,
      message: question,
    })) as ChatAnswer;
    const roll = random();
    // Most answers get no thumb at all, as with real users.
    if (roll < 0.4) await post(answer.feedback_url, { reward: roll < 0.25 ? 1 : 0 });
  }
  await post(`${service.url}/end`, { session });
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

/** A small seeded generator, so a run can be repeated. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
