// What the recorder keeps of a chat completion response, shared by the wrapped
// client and the framework plugins that see the raw response body.
import { type CompactLogprobs, compactChoice } from "../logprobs/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import type { RecordedChoice, RecordedCompletion } from "./active-rollout.js";

/** A chat completion response as it came off the wire (vLLM extras included). */
export interface ChatCompletionBody {
  id?: string;
  model?: string;
  usage?: unknown;
  prompt_token_ids?: number[];
  choices?: readonly unknown[];
}

/**
 * The response's Choices as a trajectory keeps them, each carrying the
 * response's `prompt_token_ids` (the trainer reads them from the Choice). A
 * copy: the caller keeps its own objects, and editing them afterwards changes
 * nothing recorded. The logprobs (the large part) are copied in one cheap
 * pass and turned into the compact form after the caller has its answer.
 *
 * @example
 * rollout.recordCompletion({ request, choices: recordedChoices(body), response: recordedResponse(body) });
 */
export function recordedChoices(res: ChatCompletionBody): RecordedChoice[] {
  return choicesWith(res, undefined);
}

/**
 * {@link recordedChoices}, with the logprobs a scan of the answer's text
 * found (by the Choice's place): those are kept as they are, in place of the
 * parsed ones (which the caller may not have asked for: then they were
 * stripped and are null). With `later` "copy", the parsed lists are copied
 * on the call path rather than referenced (the wrapped client's caller holds
 * them and may edit them before the rollout ends).
 */
export function choicesWith(
  res: ChatCompletionBody,
  scanned: readonly (CompactLogprobs | undefined)[] | undefined,
  later: true | "copy" = true,
): RecordedChoice[] {
  const call = "recordedChoices(res)";
  checkBody(call, res);
  const promptIds = res.prompt_token_ids;
  const choices = res.choices ?? [];
  if (!Array.isArray(choices))
    throw new InvalidArgumentError(call, "res.choices", "an array of Choices", choices);
  return choices.map((c, i) => {
    if (!isObjectLike(c) || (c.message !== undefined && !isObjectLike(c.message)))
      throw new InvalidArgumentError(
        call,
        isObjectLike(c) ? `res.choices[${i}].message` : `res.choices[${i}]`,
        "an object",
        isObjectLike(c) ? c.message : c,
      );
    const choice = c as unknown as RecordedChoice;
    // One literal (no key added afterwards), so every copy has one shape.
    // Logprobs in columns: a tenth of the SDK objects' heap until the group ships.
    const message = { ...choice.message };
    const logprobs = scanned?.[i];
    if (!promptIds)
      return logprobs
        ? ({ ...choice, message, logprobs } as RecordedChoice)
        : compactChoice({ ...choice, message }, later);
    const copy: RecordedChoice = logprobs
      ? ({ prompt_token_ids: promptIds, ...choice, message, logprobs } as RecordedChoice)
      : { prompt_token_ids: promptIds, ...choice, message };
    if (!copy.prompt_token_ids) copy.prompt_token_ids = promptIds;
    return logprobs ? copy : compactChoice(copy, later);
  });
}

/** The response fields a recorded completion keeps besides its Choices. */
export function recordedResponse(
  res: ChatCompletionBody,
): NonNullable<RecordedCompletion["response"]> {
  checkBody("recordedResponse(res)", res);
  return {
    id: res.id,
    model: res.model,
    usage: res.usage as NonNullable<RecordedCompletion["response"]>["usage"],
    prompt_token_ids: res.prompt_token_ids,
  };
}

// What a server sent may be anything: name the field that is not a response's.
function checkBody(call: string, res: unknown): asserts res is ChatCompletionBody {
  if (!isObjectLike(res))
    throw new InvalidArgumentError(call, "res", "a chat completion (an object)", res);
  const ids = res.prompt_token_ids;
  if (ids !== undefined && ids !== null && !Array.isArray(ids))
    throw new InvalidArgumentError(call, "res.prompt_token_ids", "an array of token ids", ids);
}
