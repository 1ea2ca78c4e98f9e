// A store as a deployed service leaves it: conversations recorded in process
// by the real Recorder (sessions, written to a real TrajectoryStore after
// every call) against a loopback vLLM-like server, then feedback by id: one
// conversation rewarded and eligible (its comment holds HTML, as a browser
// may send), one rewarded but refused for training, one without feedback,
// and one whose call was cut by the process stopping (interrupted).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { Recorder } from "../../src/recorder/index.js";
import { TrajectoryStore } from "../../src/store/index.js";
import { startVllmServer } from "../helpers/vllm-server.js";

/** A comment a browser could send: markup and script that must render as text. */
export const HTML_COMMENT =
  '<script>window.__pwned = 1</script><img src="http://127.0.0.1:9/x.png" onerror="window.__pwned = 2"><b>bold?</b> & "quotes"';

export interface ProductionStore {
  dir: string;
  ids: { alice: string; bob: string; carol: string; cut: string };
}

export async function productionStore(): Promise<ProductionStore> {
  const dir = mkdtempSync(path.join(tmpdir(), "report-store-"));
  const upstream = await startVllmServer({
    respond: (body, i) => ({
      content: `answer ${i} to ${String((body.messages as { content: string }[]).at(-1)?.content)}`,
    }),
  });
  const store = await TrajectoryStore.open({ dir });
  try {
    const recorder = new Recorder({ store, logger: { warn() {} } as never });
    const openai = recorder.wrap(
      new OpenAI({ baseURL: upstream.baseURL, apiKey: "k", maxRetries: 0 }),
    );
    type Message = { role: "user" | "assistant"; content: string };
    const say = async (
      session: string,
      content: string,
      before: Message[] = [],
    ): Promise<Message[]> => {
      const messages: Message[] = [...before, { role: "user", content }];
      const r = await recorder
        .session(session)
        .run(() =>
          openai.chat.completions.create({ model: "shop-assistant", messages, logprobs: true }),
        );
      const answer: Message = { role: "assistant", content: r.choices[0]?.message.content ?? "" };
      return [...messages, answer];
    };
    // The service sends the whole conversation on each turn, as chat clients do.
    await say("alice", "thanks!", await say("alice", "where is my parcel?"));
    await say("bob", "tell me a joke");
    await say("carol", "opening hours?");
    const ids = {
      alice: recorder.session("alice").id,
      bob: recorder.session("bob").id,
      carol: recorder.session("carol").id,
      cut: "trj_cut0000000000000000000000",
    };
    for (const s of ["alice", "bob", "carol"]) recorder.endSession(s);
    await recorder.close();
    store.addFeedback({
      trajectory_id: ids.alice,
      reward: 1,
      metrics: { helpful: true, minutes_saved: 4 },
      comment: HTML_COMMENT,
      source: "browser",
    });
    store.addFeedback({ trajectory_id: ids.alice, metrics: { resolved: true }, source: "ci" });
    store.addFeedback({
      trajectory_id: ids.bob,
      reward: 0.25,
      eligible: false,
      comment: "off-topic for a shop",
      source: "moderator",
    });
    // A call begun and half answered when the process stopped.
    store.beginCall(
      ids.cut,
      1,
      { model: "shop-assistant", messages: [{ role: "user", content: "cancel my order" }] },
      { session: "dave" },
    );
    store.progressCall(ids.cut, 1, { content: "Your order is bei" });
    return { dir, ids };
  } finally {
    await store.close();
    await upstream.close();
  }
}
