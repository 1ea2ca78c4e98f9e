// OpenAI's grader templates: `{{ item.field }}` reads the dataset row,
// `{{ sample.output_text }}`, `{{ sample.output_json.x }}` and
// `{{ sample.output_tools }}` the answer being graded. Strings are put in as
// they are, other values as JSON.
import type { Trajectory } from "../../trajectory/index.js";
import { InvalidArgumentError } from "../../util/argument-error.js";

/** The answer a grader sees: the trajectory's last assistant message. */
export interface Sample {
  /** Its text (content parts joined; `""` when it only called tools). */
  output_text: string;
  /** `output_text` parsed as JSON, when it is JSON. */
  output_json: unknown;
  /** The tool calls of that message (`[]` when it made none). */
  output_tools: unknown[];
}

/**
 * The sample of a trajectory, as OpenAI's graders see it: its last assistant message.
 *
 * @example
 * const { output_text, output_json, output_tools } = sampleOf(trajectory);
 */
export function sampleOf(trajectory: Trajectory): Sample {
  const last = trajectory.messages().findLast((m) => m.role === "assistant") as
    | { content?: unknown; tool_calls?: unknown[] }
    | undefined;
  const output_text = textOf(last?.content);
  let output_json: unknown;
  try {
    output_json = JSON.parse(output_text);
  } catch {
    output_json = undefined;
  }
  return { output_text, output_json, output_tools: last?.tool_calls ?? [] };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
}

const REFERENCE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The template with every reference replaced; throws naming a reference that leads nowhere. */
export function render(
  template: string,
  scope: { item: unknown; sample: Sample },
  call: string,
): string {
  return template.replace(REFERENCE, (_, ref: string) => {
    const value = resolve(ref, scope, call);
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function resolve(ref: string, scope: { item: unknown; sample: Sample }, call: string): unknown {
  const path = ref.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== "");
  const [root, ...rest] = path;
  if (root !== "item" && root !== "sample")
    throw new InvalidArgumentError(
      call,
      `{{ ${ref} }}`,
      "a reference starting with item. or sample.",
      ref,
      "a template reference must start with item or sample",
    );
  let value: unknown = scope[root];
  for (const key of rest) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key))
      throw new InvalidArgumentError(
        call,
        `{{ ${ref} }}`,
        "a value",
        undefined,
        root === "item"
          ? `the dataset item has no ${key} here (the template refers to ${ref})`
          : `the sample has no ${key} here (the template refers to ${ref}; the sample offers output_text, output_json, output_tools)`,
      );
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
