// A store of production sessions with late feedback, written with the real
// TrajectoryStore: the sessions SFT from the best is tested on.
import { TrajectoryStore } from "../../src/store/index.js";
import type { TrajectoryWire } from "../../src/wire/index.js";

export const TOOLS = [
  { type: "function", function: { name: "lookup", parameters: { type: "object" } } },
];
export const OTHER_TOOLS = [{ type: "function", function: { name: "refund", parameters: {} } }];
export const POLICY = "wandb-artifact:///me/demo/agent";

export const user = (content: string) => ({ role: "user", content });
export const plain = (content: string) => ({ role: "assistant", content });
export const choice = (content: string, finish_reason = "stop") => ({
  finish_reason,
  index: 0,
  logprobs: null,
  message: { role: "assistant", content, refusal: null },
});

export function traj(items: unknown[], extra: Partial<TrajectoryWire> = {}): TrajectoryWire {
  return {
    messages_and_choices: items,
    tools: TOOLS,
    additional_histories: [],
    reward: 0,
    initial_policy_version: null,
    final_policy_version: null,
    metrics: {},
    metadata: {},
    logs: [],
    ...extra,
  } as TrajectoryWire;
}

export const twoTurns = () => traj([user("q1"), choice("a1"), user("q2"), choice("a2")]);
export const rowOf = (...messages: unknown[]) => ({ messages, tools: TOOLS });

/** A store of finished sessions with feedback, and one call cut by a crash. */
export async function productionStore(dir: string): Promise<TrajectoryStore> {
  let store = await TrajectoryStore.open({ dir, logger: { warn: () => {} } });
  const put = (id: string, trajectory: TrajectoryWire, model = `${POLICY}:step3`, calls = 2) =>
    store.put({ id, session: id, status: "finished", trajectory, calls, model });
  put("good", twoTurns());
  put("same-as-good", twoTurns());
  put("bad", traj([user("q1"), choice("wrong")]));
  put("ineligible", traj([user("q1"), choice("leaks a secret")]));
  put("unrated", traj([user("q1"), choice("never rated")]));
  put("other-model", traj([user("q1"), choice("from gpt")]), "gpt-4o-mini");
  // A lineage split: the branch carries the first answer as plain context and its own tools.
  put(
    "split",
    traj([user("s1"), choice("b1")], {
      additional_histories: [
        {
          messages_and_choices: [user("s1"), plain("b1"), user("s2"), choice("b2")],
          tools: OTHER_TOOLS,
        },
      ] as TrajectoryWire["additional_histories"],
    }),
  );
  // A streamed answer cut off (the recorder keeps it plain and says so), then the user went on.
  put(
    "cut-stream",
    traj(
      [user("c1"), choice("c-a1"), user("c2"), plain("half an ans"), user("c3"), choice("c-a3")],
      {
        logs: [
          "completion chatcmpl-9 incomplete: terminated (kept as a plain message, not trained on)",
        ],
      },
    ),
  );
  // An answer stopped at the token limit.
  put("length", traj([user("l1"), choice("l-a1"), user("l2"), choice("l-a2 and th", "length")]));
  put("pro", traj([user("p1"), choice("p-a1")], { metadata: { tier: "pro", turns: 1 } }));
  // Mid-session, the process dies while call 3 streams.
  store.put({ id: "crash", session: "crash", status: "open", trajectory: twoTurns(), calls: 2 });
  store.beginCall("crash", 3, {
    model: POLICY,
    messages: [user("q1"), plain("a1"), user("q2"), plain("a2"), user("q3")],
  });
  store.progressCall("crash", 3, { content: "partial answ" });
  await store.close();
  store = await TrajectoryStore.open({ dir, logger: { warn: () => {} } });
  const rate = (trajectory_id: string, reward: number, eligible?: boolean) =>
    store.addFeedback({ trajectory_id, reward, ...(eligible === undefined ? {} : { eligible }) });
  for (const id of [
    "good",
    "same-as-good",
    "split",
    "cut-stream",
    "length",
    "pro",
    "crash",
    "other-model",
  ])
    rate(id, 1);
  rate("bad", 0);
  rate("ineligible", 1, false);
  return store;
}
