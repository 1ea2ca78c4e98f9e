// At the rollout's end (off the call path, where logprobs are compacted), the
// histories the recorder built by comparing messages are checked against the
// tokens the server returned: a turn whose prompt does not extend the
// previous Choice's prompt and sampled tokens goes on in a new additional
// history (its full prompt, the earlier Choices there as plain context), and
// the earlier history keeps exactly the tokens its model saw. A split costs
// moving its items and reading a few token ids for its log line; the line's
// text is written when the logs are read.
import {
  type ChoiceTokens,
  choiceTokens,
  departureNote,
  History,
  isChoice,
  type LineageMode,
  lineageDeparture,
  logLazily,
  type MessageOrChoice,
  SPLIT_LOG,
  type Trajectory,
  toChatMessage,
} from "../trajectory/index.js";

/**
 * What the lineage pass says once per rollout, through the rollout. Its
 * split and divergence lines go to the trajectory's `logs` themselves, their
 * text written when first read (see logLazily).
 */
export interface LineageLog {
  logOnce(message: string): void;
}

export const NO_TOKEN_IDS_LOG =
  "token lineage not checked: some Choices carry no prompt_token_ids/token_ids (the server did not return them), so their histories are built by comparing messages only";

/**
 * Splits the histories of `t` where a turn's prompt tokens do not extend its
 * history's lineage (`mode` "tokens"), or only says so (`mode` "text").
 * Histories whose lineage holds are left exactly as they are. `askedForIds`:
 * the rollout asked for token ids (else their absence is not logged).
 */
export function checkLineage(
  t: Trajectory,
  mode: LineageMode,
  out: LineageLog,
  askedForIds = true,
): void {
  if (mode === "off") return;
  // `from`: where a branch's own turns start (before it, plain context).
  const work: {
    items: MessageOrChoice[];
    name: () => string;
    tools: History["tools"];
    from: number;
  }[] = [
    { items: t.messages_and_choices, name: () => "messages_and_choices", tools: t.tools, from: 0 },
  ];
  t.additional_histories.forEach((h, i) => {
    work.push({
      items: h.messages_and_choices,
      name: () => `additional_histories[${i}].messages_and_choices`,
      tools: h.tools,
      from: 0,
    });
  });
  for (let w = 0; w < work.length; w++) {
    const { items, name, tools, from } = work[w] as (typeof work)[number];
    let prev: ChoiceTokens | undefined;
    let prevAt = -1;
    let choices = 0;
    for (let i = from; i < items.length; i++) {
      const item = items[i] as MessageOrChoice;
      if (!isChoice(item)) continue;
      choices++;
      const tokens = choiceTokens(item);
      if (!tokens || (!prev && choices > 1)) {
        // Said when the ids were asked for and the server sent none back.
        if (choices > 1 && askedForIds) out.logOnce(NO_TOKEN_IDS_LOG);
        prev = tokens;
        prevAt = i;
        continue;
      }
      if (prev) {
        const at = lineageDeparture(prev, tokens.prompt);
        if (at !== -1) {
          // The line's tokens are read now, its text written when `logs` is read.
          const why = departureNote(prev, tokens.prompt, at);
          if (mode === "text") {
            const here = name();
            const before = prevAt;
            logLazily(
              t.logs,
              () =>
                `token lineage diverges: ${here}[${i}]: ${why()}; kept in the same history as ${here}[${before}] (lineage: "text")`,
            );
          } else {
            // The turn and what follows go on in a new history: its full
            // prompt, with the earlier sampled turns as plain context.
            // One array, built once: the context, then the moved turns.
            const context = prevAt + 1;
            const branchItems: MessageOrChoice[] = [];
            for (let k = 0; k < context; k++)
              branchItems.push(asContext(items[k] as MessageOrChoice));
            for (let k = context; k < items.length; k++)
              branchItems.push(items[k] as MessageOrChoice);
            items.length = context;
            const branch = new History({ messages_and_choices: branchItems, tools: tools });
            t.additional_histories.push(branch);
            const index = t.additional_histories.length - 1;
            const branchName = `additional_histories[${index}].messages_and_choices`;
            const here = name();
            const before = prevAt;
            logLazily(
              t.logs,
              () =>
                `${SPLIT_LOG} ${here}[${i}] does not extend the tokens of ${here}[${before}]: ${why()}; ${here} ends at [${before}] and the turn goes on in ${branchName}[${context + i - before - 1}]`,
            );
            work.push({ items: branchItems, name: () => branchName, tools, from: context });
            break;
          }
        }
      }
      prev = tokens;
      prevAt = i;
    }
  }
}

/** A recorded item as context of a later history: a Choice becomes its plain message. */
function asContext(item: MessageOrChoice): MessageOrChoice {
  return isChoice(item) ? toChatMessage(item) : item;
}
