import { compactItems } from "../logprobs/index.js";
import { keepClassName } from "../util/class-name.js";
import { copyJson } from "../util/copy-json.js";
import { type HistoryWire, HistoryWireSchema } from "../wire/index.js";
import { checkInit } from "./init-check.js";
import type { MessageOrChoice, MessageParam, ToolParam } from "./messages.js";
import { itemsJson, toChatMessages } from "./messages.js";
import { extraKeys, parseWire } from "./parse.js";

const KNOWN = ["messages_and_choices", "tools"] as const;

/** What a History is made from; every field is optional. */
export interface HistoryInit {
  /** The conversation. Default `[]`. */
  messages_and_choices?: MessageOrChoice[];
  /** The tools offered in it. Default `null`. */
  tools?: ToolParam[] | null;
}

let fromValid: (raw: Record<string, unknown>, mode: "checked" | "written") => History;
let shell: (h: History) => Record<string, unknown>;

/**
 * An extra conversation of a trajectory (a sub-agent, a judge, a summariser),
 * trained with the trajectory's reward: ART's `History`.
 *
 * @example
 * t.additional_histories.push(new History({ messages_and_choices: [{ role: "user", content: "sum up" }, choice] }));
 */
export class History {
  /** The conversation: messages, and the Choices the model sampled. */
  messages_and_choices: MessageOrChoice[];
  /** The tools offered in it, or `null`. */
  tools: History.ToolParam[] | null;
  #extra: Record<string, unknown> | undefined;

  constructor(init: History.HistoryInit = {}) {
    checkInit("new History(init)", init, { messages_and_choices: "array", tools: "array or null" });
    this.messages_and_choices = init.messages_and_choices ?? [];
    this.tools = init.tools ?? null;
  }

  /** The conversation as plain chat messages (Choices become assistant messages). */
  messages(): MessageParam[] {
    return toChatMessages(this.messages_and_choices);
  }

  /** ART's wire JSON: `{ messages_and_choices, tools }` plus any unknown keys read in. */
  toJSON(key?: unknown): History.HistoryWire {
    return {
      // As Trajectory.toJSON: shared bytes arrays only when JSON.stringify asks.
      messages_and_choices: itemsJson(this.messages_and_choices, typeof key === "string"),
      tools: copyJson(this.tools, "tools"),
      ...copyJson(this.#extra),
    } as HistoryWire;
  }

  /**
   * Reads a History from ART's JSON (an object or a string), validating it.
   * @throws TrajectoryValidationError naming the bad field.
   */
  static fromJSON(json: unknown): History {
    parseWire(HistoryWireSchema, json, "history");
    return historyFromValid(typeof json === "string" ? JSON.parse(json) : json);
  }

  static {
    fromValid = (raw, mode) => {
      const items = (raw.messages_and_choices ?? []) as MessageOrChoice[];
      const tools = (raw.tools as ToolParam[] | null | undefined) ?? null;
      const written = mode === "written";
      const h = new History({
        messages_and_choices: written ? items : compactItems(copyJson(items)),
        tools: written ? tools : copyJson(tools),
      });
      const extra = extraKeys(raw, KNOWN);
      h.#extra = written ? extra : copyJson(extra);
      return h;
    };
    shell = (h) => ({
      messages_and_choices: h.messages_and_choices,
      tools: h.tools,
      ...h.#extra,
    });
  }
}

/**
 * The types {@link History} takes, and its JSON (declared once, beside its
 * schema in `trajectory-recorder/wire`; `Trajectory.HistoryWire` names it too).
 */
export declare namespace History {
  export type { HistoryInit, HistoryWire, ToolParam };
}

/**
 * A History from input already validated, kept verbatim (copied; with
 * `"written"`, JSON this library wrote is taken over as is).
 */
export function historyFromValid(
  raw: Record<string, unknown>,
  mode: "checked" | "written" = "checked",
): History {
  return fromValid(raw, mode);
}

/** The fields of `toJSON()` as they are in memory, for the wire writer. */
export function historyShell(h: History): Record<string, unknown> {
  return shell(h);
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(History, "History");
