import type { z } from "zod";
import { copyJson } from "../util/copy-json.js";
import {
  type ChoiceWireInput,
  type HistoryWire,
  type HistoryWireSchema,
  type TrajectoryWire,
  TrajectoryWireSchema,
} from "../wire/index.js";
import { sameType } from "../wire/same-type.js";
import { unwrapArtJson } from "./art-payload.js";
import { TrajectoryValidationError } from "./errors.js";
import {
  type ReadMode,
  TRAJECTORY_FIELDS,
  TRAJECTORY_KEYS,
  type TrajectoryFields,
} from "./fields.js";
import type { History } from "./history.js";
import { checkInit, type FieldKind } from "./init-check.js";
import type { MessageOrChoice, MessageParam } from "./messages.js";
import { toChatMessages } from "./messages.js";
import { extraKeys, parseWire } from "./parse.js";

let readWritten: (raw: Record<string, unknown>) => Trajectory;

/**
 * A trajectory from wire JSON this library wrote and just parsed (a
 * RolloutWorker's result): read without a second check, its objects taken
 * over rather than copied. Input from elsewhere goes through
 * `Trajectory.fromJSON`, which checks it.
 */
export function readWrittenTrajectory(raw: Record<string, unknown>): Trajectory {
  return readWritten(raw);
}

let readChecked: (raw: Record<string, unknown>, parsed: TrajectoryWire) => Trajectory;
let shell: (t: Trajectory) => Record<string, unknown>;

/**
 * A trajectory from JSON already validated (`parsed` is what the schema made
 * of `raw`, with its defaults); `raw` is copied. Kept off the class so the
 * public type carries no internal members.
 */
export function trajectoryFromValid(
  raw: Record<string, unknown>,
  parsed: TrajectoryWire,
): Trajectory {
  return readChecked(raw, parsed);
}

/**
 * The fields of `toJSON()`, in its order, as they are in memory (nothing
 * copied, Choices not converted): for the wire writer, which converts and
 * writes them one at a time.
 */
export function trajectoryShell(t: Trajectory): Record<string, unknown> {
  return shell(t);
}

export type { MetricValue } from "./fields.js";

/** What a Trajectory is made from; every field is optional and takes ART's default. */
export interface TrajectoryInit extends Partial<Trajectory.TrajectoryFields> {
  /** When the rollout began. Default: now. */
  start_time?: Date;
}

// What the constructor accepts: the wire fields, and `start_time`, which ART
// never dumps (it is written back only when it came in, with the unknown keys).
const INIT_KINDS = {
  ...Object.fromEntries(TRAJECTORY_KEYS.map((k) => [k, TRAJECTORY_FIELDS[k].init])),
  start_time: "Date",
} as Record<string, FieldKind>;

/**
 * A Trajectory's wire fields (`messages_and_choices`, `tools`,
 * `additional_histories`, `reward`, `initial_policy_version`,
 * `final_policy_version`, `metrics`, `metadata`, `logs`), declared once in
 * `src/trajectory/fields.ts`, with ART's names, order and defaults.
 */
export interface Trajectory extends Trajectory.TrajectoryFields {}

/**
 * One rollout: the conversation as the model saw it (plain messages for what
 * was sent, OpenAI `Choice` objects for what the model sampled), the tools, any
 * additional histories, and its reward, metrics, metadata and logs. The fields
 * are those of ART's `Trajectory`, with the same names and defaults.
 *
 * @example
 * const t = new Trajectory({ messages_and_choices: [{ role: "user", content: "2+2?" }, completion.choices[0]] });
 * t.reward = 1;
 * t.metrics.turns = 1;
 * t.log("answered in one turn");
 * JSON.stringify(t); // ART's wire JSON
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class Trajectory {
  /** When the rollout started; used by `finish()`, never sent (as in ART). */
  start_time: Date;
  #extra: Record<string, unknown> | undefined;

  constructor(init: TrajectoryInit = {}) {
    checkInit("new Trajectory(init)", init, INIT_KINDS);
    const fields = this as Record<string, unknown>;
    const given = init as Record<string, unknown>;
    for (const k of TRAJECTORY_KEYS) fields[k] = given[k] ?? TRAJECTORY_FIELDS[k].default();
    this.start_time = init.start_time ?? new Date();
  }

  /** Appends a free-form debug line to `logs`. */
  log(message: string): void {
    this.logs.push(message);
  }

  /** Sets `metrics.duration` to the seconds since `start_time`, as ART's `finish()`. */
  finish(now: Date = new Date()): void {
    this.metrics.duration = (now.getTime() - this.start_time.getTime()) / 1000;
  }

  /**
   * The main conversation as plain chat messages: each Choice becomes
   * `{ role: "assistant", content, tool_calls? }`, as ART's `messages()`.
   *
   * @example
   * const line = JSON.stringify({ messages: t.messages(), tools: t.tools ?? undefined });
   */
  messages(): MessageParam[] {
    return toChatMessages(this.messages_and_choices);
  }

  /**
   * ART's `model_dump(mode="json")`: every field in ART's order, then any
   * unknown keys read in. Everything in it is the caller's own, except when
   * JSON.stringify asks (it passes `key`): then recorded tokens' bytes arrays
   * are shared, frozen ones, which is what lets a group stringify at close to
   * the cost of its wire JSON.
   */
  toJSON(key?: unknown): Trajectory.TrajectoryWire {
    const out: Record<string, unknown> = {};
    const forStringify = typeof key === "string";
    for (const k of TRAJECTORY_KEYS) {
      const f = TRAJECTORY_FIELDS[k] as { json: (v: unknown, s: boolean, key: unknown) => unknown };
      out[k] = f.json(this[k], forStringify, key);
    }
    return Object.assign(out, copyJson(this.#extra)) as Trajectory.TrajectoryWire;
  }

  /**
   * Reads a Trajectory from ART's JSON (an object or a string). Missing keys
   * take ART's defaults; unknown keys are kept and written back by `toJSON()`.
   *
   * @throws TrajectoryValidationError naming the bad field, e.g. `reward: Invalid input: expected number`.
   * @example
   * const t = Trajectory.fromJSON(await readFile("t.json", "utf8"));
   */
  static fromJSON(input: unknown): Trajectory {
    const json = unwrapArtJson(input, "trajectory", "trajectory");
    const parsed = parseWire(TrajectoryWireSchema, json, "trajectory");
    if (parsed.start_time && !parsePythonDatetime(parsed.start_time))
      throw new TrajectoryValidationError("trajectory", [
        {
          code: "custom",
          path: ["start_time"],
          message: `expected a date and time as ISO 8601 (as Python's isoformat writes it), received ${JSON.stringify(parsed.start_time.slice(0, 40))}`,
          input: parsed.start_time,
        },
      ]);
    return Trajectory.#read(
      typeof json === "string" ? JSON.parse(json) : json,
      "checked",
      parsed.start_time,
    );
  }

  static {
    readWritten = (raw) => Trajectory.#read(raw, "written", raw.start_time);
    readChecked = (raw, parsed) => Trajectory.#read(raw, "checked", parsed.start_time);
    shell = (t) => {
      const out: Record<string, unknown> = {};
      for (const k of TRAJECTORY_KEYS) out[k] = t[k];
      return Object.assign(out, t.#extra);
    };
  }

  static #read(raw: Record<string, unknown>, mode: ReadMode, startTime: unknown): Trajectory {
    const init: Record<string, unknown> = {};
    for (const k of TRAJECTORY_KEYS) init[k] = TRAJECTORY_FIELDS[k].read(raw[k], mode);
    const t = new Trajectory({
      ...(init as Partial<TrajectoryFields>),
      start_time: typeof startTime === "string" ? parsePythonDatetime(startTime) : undefined,
    });
    const extra = extraKeys(raw, TRAJECTORY_KEYS);
    t.#extra = mode === "written" ? extra : copyJson(extra);
    return t;
  }
}

/**
 * The trajectory's JSON as ART serializes it and `toJSON()` returns it: the same
 * types as the wire folder's of these names (`trajectory-recorder/wire`, with
 * their zod schemas), checked below.
 */
export declare namespace Trajectory {
  /**
   * A Trajectory's wire fields as they are in memory (the class's own fields),
   * written out from `TRAJECTORY_FIELDS` in src/trajectory/fields.ts, checked below.
   */
  export interface TrajectoryFields {
    /** The conversation: messages the model saw, and the Choices it sampled. Default `[]`. */
    messages_and_choices: MessageOrChoice[];
    /** The tools offered to the model. Default `null`. */
    tools: History.ToolParam[] | null;
    /** Extra conversations (a sub-agent, a judge), trained with this reward. Default `[]`. */
    additional_histories: History[];
    /** The trajectory's reward. Default `0`. */
    reward: number;
    /** The policy version (checkpoint step) the rollout started with. Default `null`. */
    initial_policy_version: number | null;
    /** The policy version it ended with. Default `null`. */
    final_policy_version: number | null;
    /** Numbers and flags about the rollout (ART takes numbers and booleans only). Default `{}`. */
    metrics: Record<string, number | boolean>;
    /** Facts about the rollout. Default `{}`. */
    metadata: Record<string, unknown>;
    /** Free-form log lines. Default `[]`. */
    logs: string[];
  }
  /** A trajectory as ART serializes it. */
  export interface TrajectoryWire {
    /** The conversation: messages the model saw, and the Choices it sampled. */
    messages_and_choices: MessageOrChoiceWire[];
    /** The tools offered to the model, or `null`. */
    tools: ToolWire[] | null;
    /** Extra conversations (a sub-agent, a judge), trained with this reward. */
    additional_histories: HistoryWire[];
    /** The trajectory's reward. */
    reward: number;
    /** The policy version (checkpoint step) the rollout started with, or `null`. */
    initial_policy_version: number | null;
    /** The policy version it ended with, or `null`. */
    final_policy_version: number | null;
    /** Numbers and flags about the rollout. */
    metrics: Record<string, number | boolean>;
    /** Facts about the rollout. */
    metadata: Record<string, unknown>;
    /** Free-form log lines. */
    logs: string[];
    /** When the rollout started (ISO 8601), when the JSON read had it. */
    start_time?: string | undefined;
    /** Keys ART adds later, kept as read. */
    [key: string]: unknown;
  }
  /** An extra conversation of a trajectory (ART's `History`). */
  export interface HistoryWire {
    /** Its messages and Choices. */
    messages_and_choices: MessageOrChoiceWire[];
    /** The tools offered in it, or `null`. */
    tools: ToolWire[] | null;
    /** Keys ART adds later, kept as read. */
    [key: string]: unknown;
  }
  /** One item of `messages_and_choices`: a Choice the model sampled, or a message. */
  export type MessageOrChoiceWire = ChoiceWire | MessageWire;
  /** A chat message of any role: context the model saw, never trained on. */
  export type MessageWire =
    | SystemMessageWire
    | DeveloperMessageWire
    | UserMessageWire
    | AssistantMessageWire
    | ToolMessageWire
    | FunctionMessageWire;
  /** A system message. */
  export interface SystemMessageWire {
    /** Always `"system"`. */
    role: "system";
    /** Its text, or content parts. */
    content?: string | unknown[] | null | undefined;
    /** The speaker's name. */
    name?: string | undefined;
    /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  }
  /** A developer message. */
  export interface DeveloperMessageWire {
    /** Always `"developer"`. */
    role: "developer";
    /** Its text, or content parts. */
    content?: string | unknown[] | null | undefined;
    /** The speaker's name. */
    name?: string | undefined;
    /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  }
  /** A user message. */
  export interface UserMessageWire {
    /** Always `"user"`. */
    role: "user";
    /** Its text, or content parts. */
    content?: string | unknown[] | null | undefined;
    /** The speaker's name. */
    name?: string | undefined;
    /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  }
  /** An assistant message given as context (not a sampled Choice). */
  export interface AssistantMessageWire {
    /** Always `"assistant"`. */
    role: "assistant";
    /** Its text, or content parts. */
    content?: string | unknown[] | null | undefined;
    /** The speaker's name. */
    name?: string | undefined;
    /** The model's refusal, when it refused. */
    refusal?: string | null | undefined;
    /** The tool calls it made. */
    tool_calls?: ToolCallWire[] | undefined;
    /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  }
  /** A tool's result. */
  export interface ToolMessageWire {
    /** Always `"tool"`. */
    role: "tool";
    /** Its text, or content parts. */
    content?: string | unknown[] | null | undefined;
    /** The id of the tool call it answers. */
    tool_call_id: string;
    /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  }
  /** A function's result (the older form of a tool's). */
  export interface FunctionMessageWire {
    /** Always `"function"`. */
    role: "function";
    /** Its text, or content parts. */
    content?: string | unknown[] | null | undefined;
    /** The function's name. */
    name: string;
    /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  }
  /** A model-sampled assistant turn: OpenAI's `Choice` with its logprobs (what the trainer learns from). */
  export interface ChoiceWire {
    /** Why sampling stopped, or `null`. */
    finish_reason: string | null;
    /** Its index among the completion's choices. */
    index: number;
    /** The sampled tokens' logprobs, or `null`. */
    logprobs: {
      /** One entry per sampled token of the content. */
      content: TokenLogprobWire[] | null;
      /** One entry per sampled token of a refusal. */
      refusal: TokenLogprobWire[] | null;
      /** Keys the engine adds, kept. */
      [key: string]: unknown;
    } | null;
    /** The message it produced. */
    message: {
      /** Its text, or `null`. */
      content: string | null;
      /** The refusal, or `null`. */
      refusal: string | null;
      /** Always `"assistant"`. */
      role: "assistant";
      /** The tool calls it made. */
      tool_calls?: ToolCallWire[] | null | undefined;
      /** Keys the engine adds (`reasoning_content`, ...), kept. */
      [key: string]: unknown;
    };
    /** Keys the engine adds (`token_ids`, `prompt_token_ids`, ...), kept. */
    [key: string]: unknown;
  }
  /** One sampled token with its logprob (OpenAI's `ChatCompletionTokenLogprob`). */
  export interface TokenLogprobWire {
    /** The token's text. */
    token: string;
    /** Its UTF-8 bytes, or `null`. */
    bytes: number[] | null;
    /** Its log probability. */
    logprob: number;
    /** The likeliest tokens at this position. */
    top_logprobs: {
      /** The token's text. */
      token: string;
      /** Its UTF-8 bytes, or `null`. */
      bytes: number[] | null;
      /** Its log probability. */
      logprob: number;
      /** Keys the engine adds, kept. */
      [key: string]: unknown;
    }[];
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  }
  /** A tool call made by an assistant message or a Choice. */
  export interface ToolCallWire {
    /** The call's id. */
    id: string;
    /** `"function"`. */
    type: string;
    /** The function called. */
    function: {
      /** Its name. */
      name: string;
      /** Its arguments, as JSON text. */
      arguments: string;
      /** Keys the engine adds, kept. */
      [key: string]: unknown;
    };
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  }
  /** A function tool offered to the model (OpenAI's `ChatCompletionTool`). */
  export interface ToolWire {
    /** `"function"`. */
    type: string;
    /** The function. */
    function: {
      /** Its name. */
      name: string;
      /** What it does. */
      description?: string | undefined;
      /** Its parameters' JSON schema. */
      parameters?: Record<string, unknown> | undefined;
      /** Whether calls must follow the schema exactly. */
      strict?: boolean | null | undefined;
      /** Other keys, kept. */
      [key: string]: unknown;
    };
    /** Other keys, kept. */
    [key: string]: unknown;
  }

  // What a request takes: the same JSON with every key that has ART's default
  // left optional, and a Choice's role any string (checked at run time).
  /**
   * A trajectory's JSON as `trainingJobs.create` and `models.log` take it: a
   * {@link TrajectoryWire} in which every key with ART's default may be left out.
   */
  export interface TrajectoryWireInput {
    /** The conversation. Default `[]`. */
    messages_and_choices?: MessageOrChoiceWireInput[] | undefined;
    /** The tools offered to the model. Default `null`. */
    tools?: ToolWireInput[] | null | undefined;
    /** Extra conversations, trained with this reward. Default `[]`. */
    additional_histories?: HistoryWireInput[] | undefined;
    /** The trajectory's reward. Default `0`. */
    reward?: number | undefined;
    /** The policy version the rollout started with. Default `null`. */
    initial_policy_version?: number | null | undefined;
    /** The policy version it ended with. Default `null`. */
    final_policy_version?: number | null | undefined;
    /** Numbers and flags about the rollout. Default `{}`. */
    metrics?: Record<string, number | boolean> | undefined;
    /** Facts about the rollout. Default `{}`. */
    metadata?: Record<string, unknown> | undefined;
    /** Free-form log lines. Default `[]`. */
    logs?: string[] | undefined;
    /** When the rollout started (ISO 8601); older service schemas list it. */
    start_time?: string | undefined;
    /** Keys ART adds later, kept. */
    [key: string]: unknown;
  }
  /** An extra conversation as a request takes it ({@link HistoryWire}, `tools` optional). */
  export interface HistoryWireInput {
    /** Its messages and Choices. */
    messages_and_choices: MessageOrChoiceWireInput[];
    /** The tools offered in it. Default `null`. */
    tools?: ToolWireInput[] | null | undefined;
    /** Keys ART adds later, kept. */
    [key: string]: unknown;
  }
  /** One item of `messages_and_choices` as a request takes it: a Choice, or a message. */
  export type MessageOrChoiceWireInput = ChoiceWireInput | MessageWireInput;
  /**
   * A message as a request takes it: any `role` (each role's fields are checked
   * at run time, so objects built without `as const` type-check).
   */
  export interface MessageWireInput {
    /** `"system"`, `"developer"`, `"user"`, `"assistant"`, `"tool"` or `"function"`. */
    role: string;
    /** Its other fields (`content`, `name`, `tool_call_id`, ...). */
    [key: string]: unknown;
  }
  /** A Choice as a request takes it ({@link ChoiceWire}; defaulted keys optional, any `role`). */
  export interface ChoiceWireInput {
    /** Why sampling stopped, or `null`. */
    finish_reason: string | null;
    /** Its index among the completion's choices. */
    index: number;
    /** The sampled tokens' logprobs. Default `null`. */
    logprobs?:
      | {
          /** One entry per sampled token of the content. Default `null`. */
          content?: TokenLogprobWireInput[] | null | undefined;
          /** One entry per sampled token of a refusal. Default `null`. */
          refusal?: TokenLogprobWireInput[] | null | undefined;
          /** Keys the engine adds, kept. */
          [key: string]: unknown;
        }
      | null
      | undefined;
    /** The message it produced. */
    message: {
      /** Its text. Default `null`. */
      content?: string | null | undefined;
      /** The refusal. Default `null`. */
      refusal?: string | null | undefined;
      /** `"assistant"` (checked at run time). */
      role: string;
      /** The tool calls it made. */
      tool_calls?: ToolCallWireInput[] | null | undefined;
      /** Keys the engine adds (`reasoning_content`, ...), kept. */
      [key: string]: unknown;
    };
    /** Keys the engine adds (`token_ids`, `prompt_token_ids`, ...), kept. */
    [key: string]: unknown;
  }
  /** One sampled token as a request takes it ({@link TokenLogprobWire}; defaulted keys optional). */
  export interface TokenLogprobWireInput {
    /** The token's text. */
    token: string;
    /** Its UTF-8 bytes. Default `null`. */
    bytes?: number[] | null | undefined;
    /** Its log probability. */
    logprob: number;
    /** The likeliest tokens at this position. Default `[]`. */
    top_logprobs?:
      | {
          /** The token's text. */
          token: string;
          /** Its UTF-8 bytes. Default `null`. */
          bytes?: number[] | null | undefined;
          /** Its log probability. */
          logprob: number;
          /** Keys the engine adds, kept. */
          [key: string]: unknown;
        }[]
      | undefined;
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  }
  /** A tool call as a request takes it ({@link ToolCallWire}; `type` optional). */
  export interface ToolCallWireInput {
    /** The call's id. */
    id: string;
    /** `"function"`. Default `"function"`. */
    type?: string | undefined;
    /** The function called, as in {@link ToolCallWire}. */
    function: ToolCallWire["function"];
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  }
  /** A tool as a request takes it ({@link ToolWire}; `type` optional). */
  export interface ToolWireInput {
    /** `"function"`. Default `"function"`. */
    type?: string | undefined;
    /** The function, as in {@link ToolWire}. */
    function: ToolWire["function"];
    /** Other keys, kept. */
    [key: string]: unknown;
  }
}
// The same types as the wire folder's (the whole tree is compared).
sameType<Trajectory.TrajectoryWire, TrajectoryWire>(true);
sameType<Trajectory.TrajectoryWireInput, z.input<typeof TrajectoryWireSchema>>(true);
sameType<Trajectory.HistoryWireInput, z.input<typeof HistoryWireSchema>>(true);
sameType<Trajectory.ChoiceWireInput, ChoiceWireInput>(true);
sameType<Trajectory.HistoryWire, HistoryWire>(true);
sameType<Trajectory.TrajectoryFields, TrajectoryFields>(true);

// Python's isoformat may carry microseconds and no zone (naive local time);
// JavaScript's Date wants at most milliseconds.
function parsePythonDatetime(value: string): Date | undefined {
  const date = new Date(value.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(date.getTime()) ? undefined : date;
}
