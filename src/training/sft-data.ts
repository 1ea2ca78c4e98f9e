// The SFT training file: one `{messages, tools?}` JSON object per line.
import { z } from "zod";
import { InvalidTrainingOptionsError } from "../util/training-options-error.js";
import { formatZodPath } from "../wire/index.js";

/** Anything that can become one SFT line: a `Trajectory`, or a line object itself. */
export type SftExample =
  | { messages(): unknown[]; tools?: unknown[] | null }
  | { messages: unknown[]; tools?: unknown[] | null };

const LineSchema = z.looseObject({
  messages: z
    .array(z.looseObject({ role: z.string() }))
    .min(1, { error: "expected at least one message" })
    // Only assistant tokens carry the loss, and ART's trainer requires the
    // last message to be the assistant's.
    .refine((messages) => messages.at(-1)?.role === "assistant", {
      error: "expected the last message to be an assistant message",
    }),
  tools: z.array(z.unknown()).optional(),
});

/**
 * Builds the SFT JSONL: each trajectory's `messages()` and, when it has any,
 * its `tools`. A JSONL string is checked line by line and returned as is.
 * Throws naming the bad item (or line) when one has no messages.
 *
 * @example
 * const jsonl = toSftJsonl(trajectories); // '{"messages":[...],"tools":[...]}\n...'
 */
export function toSftJsonl(input: readonly SftExample[] | string): {
  jsonl: string;
  lines: number;
} {
  if (typeof input === "string") {
    const rows = input.split("\n").filter((line) => line.trim() !== "");
    rows.forEach((row, i) => {
      let value: unknown;
      try {
        value = JSON.parse(row);
      } catch {
        throw new InvalidTrainingOptionsError("trainSft", [`line ${i + 1}: expected JSON`]);
      }
      check(value, `line ${i + 1}`);
    });
    return { jsonl: rows.map((r) => `${r}\n`).join(""), lines: rows.length };
  }
  if (!Array.isArray(input)) {
    throw new InvalidTrainingOptionsError("trainSft", [
      "data: expected an array of trajectories or a JSONL string",
    ]);
  }
  const out = input.map((item, i) => {
    if (!item || typeof item !== "object") {
      throw new InvalidTrainingOptionsError("trainSft", [
        `data[${i}]: expected a Trajectory or a { messages } object, received ${item === null ? "null" : typeof item}`,
      ]);
    }
    const messages =
      typeof item.messages === "function" ? item.messages() : (item.messages as unknown[]);
    const line: Record<string, unknown> = { messages };
    if (Array.isArray(item.tools) && item.tools.length > 0) line.tools = item.tools;
    check(line, `trajectories[${i}]`);
    return `${JSON.stringify(line)}\n`;
  });
  return { jsonl: out.join(""), lines: out.length };
}

function check(value: unknown, where: string): void {
  const parsed = LineSchema.safeParse(value);
  if (!parsed.success) {
    throw new InvalidTrainingOptionsError(
      "trainSft",
      parsed.error.issues.map((i) => {
        const p = formatZodPath(i.path);
        return `${where}${p === "(root)" ? "" : `.${p}`}: ${i.message}`;
      }),
    );
  }
}
