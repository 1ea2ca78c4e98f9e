// The training half of the production loop: every K feedback events the
// store holds, it turns what users rated into a better checkpoint and the
// chat service switches to it.
//
// - SFT from the best: every session rated thumbs up so far becomes SFT rows (`sftRowsFromStore`) and train through `trainSft`.
// - Replayed groups: the states users rated (thumbs down first) are sampled
//   again N times from the new checkpoint (`replayGroups`), each answer scored
//   against what users liked and disliked for the same question, and the
//   groups whose rewards differ train with `model.train`.
// - Sessions the infrastructure failed (a 503 the client retried) are counted
//   and their ratings are not taken as the policy's: they are left out of the
//   references and of SFT.
import { TrainableModel, TrainingClient } from "trajectory-recorder";
import { replayGroups } from "trajectory-recorder/replay";
import { sftRowsFromStore, type TrajectoryStore } from "trajectory-recorder/store";
import { isInfraFailure, referencesOf, scoreAgainst } from "./references.js";
import type { ChatService } from "./service.js";

/** What {@link startTrainer} takes. */
export interface TrainerOptions {
  /** The chat service whose store is read and whose model is switched. */
  service: ChatService;
  /** Train after this many new feedback events. Default 16. */
  every?: number;
  /** Answers sampled per replayed state. Default 8. */
  n?: number;
  /** The most states replayed per round. Default 12. */
  replayLimit?: number;
  /** Where the trainer's lines go (the library's lines too). Default `console.log`. */
  log?: (line: string) => void;
}

/** What one training round did. */
export interface TrainerRound {
  /** Feedback events seen in the store when the round started. */
  feedback: number;
  /** SFT rows trained on (0: no SFT job this round). */
  sftRows: number;
  /** Sessions left out because the infrastructure failed during them. */
  infraFailures: number;
  /** States replayed, and the groups of them that trained (rewards differed). */
  replayedStates: number;
  replayedGroups: number;
  /** The replayed states' mean reward under the checkpoint before the round's RL job. */
  replayMeanReward: number | null;
  /** Groups `train` dropped as too far off-policy. */
  staleGroups: number;
  /** The step the chat serves after the round. */
  step: number;
}

/** A running trainer. */
export interface Trainer {
  model: TrainableModel;
  /** Trains when K new feedback events have arrived; null when not yet. */
  check(): Promise<TrainerRound | null>;
  /** Every round so far. */
  rounds: TrainerRound[];
}

/**
 * Registers the chat's model on the emulator, switches the service to its
 * step 0 (so every session records the step that served it), and returns a
 * trainer to `check()` after feedback arrives.
 */
export async function startTrainer(options: TrainerOptions): Promise<Trainer> {
  const { service } = options;
  const every = options.every ?? 16;
  const log = options.log ?? ((line: string) => console.log(line));
  const logger = { info: log, warn: log };
  const client = new TrainingClient({
    baseURL: service.emulator.url,
    apiKey: service.emulator.apiKey,
  });
  const model = await TrainableModel.register(client, {
    project: "chat",
    name: "assistant",
    baseModel: "emulator/tiny",
  });
  service.setModel(model.inferenceName(await model.getStep()));
  let seen = 0;
  let since: number | undefined;
  const rounds: TrainerRound[] = [];

  const round = async (feedback: number): Promise<TrainerRound> => {
    const store = service.store;
    const started = Date.now();
    const failed = infraFailed(store);
    // SFT from the best: every thumbs up so far (the same conversation is one
    // row), sessions the infrastructure failed left out.
    const best = sftRowsFromStore(store, { minReward: 1, eligible: true });
    const rows = best.rows.filter((_, i) => !failed.has(best.ids[i] ?? ""));
    if (rows.length > 0) await model.trainSft(rows, { learningRate: 5e-5 });
    // Each replayed answer is scored against what users liked and disliked.
    const references = referencesOf(store);
    const replay = await replayGroups({
      store,
      model,
      n: options.n ?? 8,
      reward: (t) => scoreAgainst(references, t),
      select: { limit: options.replayLimit ?? 12, since },
      requestOptions: { max_tokens: 24, temperature: 1 },
      logger,
    });
    const rewards = replay.states.flatMap((s) => s.rewards);
    let staleGroups = 0;
    if (replay.groups.length > 0) {
      const trained = await model.train(replay.groups, { learningRate: 2e-5 }, { logger });
      staleGroups = trained.staleGroups ?? 0;
    }
    const step = await model.getStep();
    service.setModel(model.inferenceName(step));
    since = started;
    return {
      feedback,
      sftRows: rows.length,
      infraFailures: failed.size,
      replayedStates: replay.states.length,
      replayedGroups: replay.groups.length,
      replayMeanReward: rewards.length > 0 ? mean(rewards) : null,
      staleGroups,
      step,
    };
  };

  return {
    model,
    rounds,
    async check() {
      const feedback = service.store.list().reduce((n, t) => n + t.feedback, 0);
      if (feedback - seen < every) return null;
      seen = feedback;
      const done = await round(feedback);
      rounds.push(done);
      log(
        `trainer: ${feedback} feedback events: SFT on ${done.sftRows} best-rated row(s), ${done.replayedGroups} of ${done.replayedStates} replayed group(s) trained (mean reward ${done.replayMeanReward?.toFixed(2) ?? "-"}), ${done.infraFailures} session(s) left out as infrastructure failures; the chat now serves step ${done.step}`,
      );
      return done;
    },
  };
}

/** The ids of the sessions the proxy marked as infrastructure failures. */
function infraFailed(store: TrajectoryStore): Set<string> {
  const out = new Set<string>();
  for (const s of store.list()) {
    const stored = store.get(s.id);
    if (stored && isInfraFailure(stored)) out.add(s.id);
  }
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
