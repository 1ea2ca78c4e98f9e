import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { copyJson } from "../util/copy-json.js";
import { choiceJson } from "./choice-json.js";
import type { ChoiceLike, MessageOrChoice, MessageParam } from "./message-types.js";

// The shapes are declared in message-types.ts, below choice-json.ts, which needs them too.
export type { ChoiceLike, MessageOrChoice, MessageParam, ToolParam } from "./message-types.js";

/**
 * Tells a Choice (it has a `message` key) from a plain message param.
 *
 * @example
 * trajectory.messages_and_choices.filter(isChoice).length; // sampled turns
 */
export function isChoice(item: MessageOrChoice): item is ChoiceLike {
  return typeof item === "object" && item !== null && "message" in item;
}

/**
 * Turns `messages_and_choices` into plain chat messages, as ART's
 * `Trajectory.messages()` does: each Choice becomes
 * `{ role: "assistant", content, tool_calls? }` (content `""` when null,
 * `tool_calls` only when there are some, other fields dropped), and a message
 * whose content is null gets `""`.
 *
 * @example
 * toChatMessages(t.messages_and_choices); // ready for an SFT line or a judge
 */
export function toChatMessages(items: readonly MessageOrChoice[]): MessageParam[] {
  checkItems("toChatMessages(items)", items);
  return items.map(plainMessage);
}

/**
 * One element of `messages_and_choices` as a plain chat message (see
 * {@link toChatMessages}).
 *
 * @example
 * toChatMessage(choice); // { role: "assistant", content: "Paris" }
 */
export function toChatMessage(item: MessageOrChoice): MessageParam {
  checkItem("toChatMessage(item)", "item", item);
  return plainMessage(item);
}

function plainMessage(item: MessageOrChoice): MessageParam {
  if (isChoice(item)) {
    const { content, tool_calls } = item.message;
    const message: MessageParam & { tool_calls?: unknown[] } = {
      role: "assistant",
      content: content ?? "",
    };
    if (tool_calls && tool_calls.length > 0) message.tool_calls = [...tool_calls];
    return message;
  }
  if (item.content === null || item.content === undefined) return { ...item, content: "" };
  return item;
}

/**
 * `messages_and_choices` as ART's JSON: messages copied as they are, Choices
 * written as openai-python dumps them (see {@link choiceToJson}).
 */
export function messagesAndChoicesToJson(items: readonly MessageOrChoice[]): unknown[] {
  checkItems("messagesAndChoicesToJson(items)", items);
  return itemsJson(items, false);
}

/** {@link messagesAndChoicesToJson}, for JSON.stringify when `forStringify` (see `choiceJson`). */
export function itemsJson(items: readonly MessageOrChoice[], forStringify: boolean): unknown[] {
  return items.map((item, i) =>
    isChoice(item) ? choiceJson(item, forStringify) : copyJson(item, `messages_and_choices[${i}]`),
  );
}

function checkItems(call: string, items: unknown): asserts items is readonly MessageOrChoice[] {
  if (!Array.isArray(items))
    throw new InvalidArgumentError(call, "items", "an array of messages and Choices", items);
  for (let i = 0; i < items.length; i++) checkItem(call, `items[${i}]`, items[i]);
}

// Only what reading the item needs: its own schema is checked by fromJSON and before a send.
function checkItem(call: string, path: string, item: unknown): asserts item is MessageOrChoice {
  if (!isObjectLike(item) || Array.isArray(item))
    throw new InvalidArgumentError(call, path, "a message or a Choice (an object)", item);
  if (!("message" in item)) return;
  const message = item.message;
  if (!isObjectLike(message))
    throw new InvalidArgumentError(call, `${path}.message`, "an object", message);
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null && !Array.isArray(calls))
    throw new InvalidArgumentError(call, `${path}.message.tool_calls`, "an array or null", calls);
}
