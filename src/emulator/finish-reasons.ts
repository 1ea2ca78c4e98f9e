// The service validates each Choice of a training job against OpenAI's
// `Choice`, whose `finish_reason` is an enum (both of its OpenAPI documents):
// a Choice that ended any other way (vLLM's "abort", a null from an
// unfinished stream) is answered 422, before a job is created. The wire
// schema the emulator parses bodies with takes any string there (it also
// reads what engines answer), so the emulator checks the enum here, and
// answers as pydantic words a refused literal.
import type { ValidationErrorItem } from "../wire/index.js";

const FINISH_REASONS = ["stop", "length", "tool_calls", "content_filter", "function_call"];
const EXPECTED = `${FINISH_REASONS.slice(0, -1)
  .map((r) => `'${r}'`)
  .join(", ")} or '${FINISH_REASONS.at(-1)}'`;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function checkItems(items: unknown, loc: (string | number)[], out: ValidationErrorItem[]): void {
  if (!Array.isArray(items)) return;
  items.forEach((item, k) => {
    // A Choice is the item that carries `message` (a message param never does).
    if (!isObj(item) || !("message" in item)) return;
    if (FINISH_REASONS.includes(item.finish_reason as string)) return;
    out.push({
      loc: [...loc, k, "finish_reason"],
      msg: `Input should be ${EXPECTED}`,
      type: "literal_error",
    });
  });
}

/** The 422 items for Choices of `groups` whose `finish_reason` is outside the service's enum. */
export function finishReasonProblems(groups: unknown): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  if (!Array.isArray(groups)) return out;
  groups.forEach((g, gi) => {
    const trajectories = isObj(g) ? g.trajectories : undefined;
    if (!Array.isArray(trajectories)) return;
    trajectories.forEach((t, ti) => {
      if (!isObj(t)) return;
      const at = ["body", "trajectory_groups", gi, "trajectories", ti];
      checkItems(t.messages_and_choices, [...at, "messages_and_choices"], out);
      if (Array.isArray(t.additional_histories))
        t.additional_histories.forEach((h, hi) => {
          if (isObj(h))
            checkItems(
              h.messages_and_choices,
              [...at, "additional_histories", hi, "messages_and_choices"],
              out,
            );
        });
    });
  });
  return out;
}
