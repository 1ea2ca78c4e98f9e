// The simulated users: what they ask, the word an answer must say to please
// them (the emulator's model speaks 24 words; these are among them), and one
// conversation through the chat service.
import type { ChatAnswer, ChatService } from "./service.js";

/** Each question, and the word that pleases whoever asks it. */
export const QUESTIONS: readonly (readonly [question: string, wanted: string])[] = [
  ["What colour is a banana?", "yellow"],
  ["What colour is a cherry?", "red"],
  ["Which animal barks?", "dog"],
  ["How many wings does a bird have?", "two"],
  ["Which pet lives in a bowl of water?", "fish"],
  ["Is a grape a fruit?", "yes"],
];

/** True when the answer says the word its asker wanted. */
export const pleases = (answer: string, wanted: string) =>
  answer.toLowerCase().split(/\s+/).includes(wanted);

/** One conversation, ended: the question asked and the service's answer. */
export interface Conversation {
  question: string;
  wanted: string;
  answer: ChatAnswer;
  pleased: boolean;
}

/** A user asks one question (chosen by `random`) and ends the conversation; rating is left to the caller. */
export async function converse(
  service: ChatService,
  session: string,
  random: () => number,
): Promise<Conversation> {
  const [question, wanted] = QUESTIONS[Math.floor(random() * QUESTIONS.length)] as readonly [
    string,
    string,
  ];
  const answer = (await post(`${service.url}/chat`, { session, message: question })) as ChatAnswer;
  await post(`${service.url}/end`, { session });
  return { question, wanted, answer, pleased: pleases(answer.answer, wanted) };
}

/** A thumb, up when the answer pleased, sent to the answer's signed feedback URL. */
export async function rate(c: Conversation): Promise<void> {
  await post(c.answer.feedback_url, { reward: c.pleased ? 1 : 0 });
}

export async function post(url: string, body: unknown): Promise<unknown> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!r.ok)
    throw new Error(`POST ${new URL(url).pathname} answered ${r.status}: ${await r.text()}`);
  return r.json();
}
