// What users said about the answers to each question, as references a
// replayed answer is scored against: a stand-in for the judge or reward model
// a real service has, knowing only the store's feedback. Plain JSON, so a
// reward module for `trajectory-recorder replay --reward` can load it too.
import type { Trajectory } from "trajectory-recorder";
import type { StoredTrajectory, TrajectoryStore } from "trajectory-recorder/store";

/** Per question, the words of liked and of disliked answers. */
export type References = Record<string, { liked: string[]; disliked: string[] }>;

/** True when the proxy marked the stored session as an infrastructure failure. */
export const isInfraFailure = (stored: StoredTrajectory) => {
  const mark = stored.trajectory.metadata?.infra_failure;
  return mark !== undefined && mark !== false;
};

/** The references a store's rated sessions give; sessions the infrastructure failed are left out. */
export function referencesOf(store: TrajectoryStore): References {
  const out: References = {};
  for (const s of store.list()) {
    if (s.reward === null) continue;
    const stored = store.get(s.id);
    if (!stored || isInfraFailure(stored)) continue;
    const { question, answer } = lastExchange(stored.trajectory.messages_and_choices);
    if (question === undefined || answer === undefined) continue;
    const ref = out[question] ?? { liked: [], disliked: [] };
    out[question] = ref;
    const into = s.reward >= 1 ? ref.liked : ref.disliked;
    for (const w of wordsOf(answer)) if (!into.includes(w)) into.push(w);
  }
  return out;
}

/** 1 when the answer holds a word of a liked answer to its question that no disliked answer held, else 0. */
export function scoreAgainst(refs: References, trajectory: Trajectory): number {
  const { question, answer } = lastExchange(trajectory.messages());
  const ref = question === undefined ? undefined : refs[question];
  if (!ref || answer === undefined) return 0;
  return wordsOf(answer).some((w) => ref.liked.includes(w) && !ref.disliked.includes(w)) ? 1 : 0;
}

/** The last user message's text and the assistant's answer after it. */
export function lastExchange(items: readonly unknown[]): { question?: string; answer?: string } {
  let question: string | undefined;
  let answer: string | undefined;
  for (const item of items) {
    const m = (item as { message?: unknown }).message ?? item;
    const { role, content } = m as { role?: string; content?: unknown };
    if (role === "user" && typeof content === "string") {
      question = content;
      answer = undefined;
    } else if (role === "assistant" && typeof content === "string") answer = content;
  }
  return { question, answer };
}

const wordsOf = (text: string) => text.toLowerCase().match(/[a-z]+/g) ?? [];
