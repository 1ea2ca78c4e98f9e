// RL and SFT updates of the policy, run as background jobs that emit events.
import { errorMessage } from "../util/error-message.js";
import { historyTerms, lossConfig } from "./loss.js";
import {
  accumulateLogpGrad,
  contentText,
  EOS_ID,
  type Params,
  type Position,
  positionAt,
  promptFeatures,
  startPrev,
  TOOL_ID,
  tokenId,
  tokenize,
  tokenLogprob,
  toolCallTokens,
  usableParams,
} from "./model.js";
import { loadTrainingRows, type TrainingDataAccess, TrainingDataError } from "./sft-data.js";
import type { Store, StoredJob } from "./store.js";

export type { TrainingDataAccess } from "./sft-data.js";

/**
 * ART-style learning rates (1e-6..1e-4) are tiny for this model; they are
 * multiplied by this (ART's default 5e-6 is a step of 0.5).
 */
export const LEARNING_RATE_SCALE = 100_000;
/**
 * No parameter moves further than this in one gradient step: a larger step
 * is scaled down as a whole (direction kept), as gradient clipping keeps a
 * real model's step bounded. So rates from 5e-6 up learn at about the same
 * pace, and 1e-4 does not throw the policy onto one answer.
 */
export const MAX_PARAM_STEP = 0.5;
/** SFT's cross-entropy steps are not bounded; its rates are multiplied by this. */
export const SFT_LEARNING_RATE_SCALE = 20_000;

class JobError extends Error {}

const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Sequence {
  features: number[];
  tokens: number[];
  oldLogprobs: (number | null)[];
  /** Names of the tools offered, in order: they fix which name tokens exist. */
  tools: string[];
}

/** The function names of a `tools` list. */
function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => String((t as { function?: { name?: unknown } })?.function?.name ?? ""));
}

/** The tokens a message stands for when no logprobs or token ids were recorded. */
function messageTokens(message: Json, tools: string[]): number[] {
  const call = (message.tool_calls as Json[] | undefined)?.[0]?.function as Json | undefined;
  if (call) return toolCallTokens(String(call.name), String(call.arguments ?? ""), tools);
  return tokenize(contentText(message.content));
}

type Json = Record<string, unknown>;

function isChoice(item: unknown): item is Json {
  return !!item && typeof item === "object" && "finish_reason" in item && "message" in item;
}

/** The trainable turns of one history: each Choice with the messages before it. */
function sequencesOf(
  items: unknown[],
  tools: unknown,
  allowWithoutLogprobs: boolean,
  where: string,
): Sequence[] {
  const out: Sequence[] = [];
  const context: { role?: unknown; content?: unknown }[] = [];
  const names = toolNames(tools);
  items.forEach((item, i) => {
    if (!isChoice(item)) {
      context.push(item as Json);
      return;
    }
    const message = (item.message ?? {}) as Json;
    const content = ((item.logprobs as Json | null | undefined)?.content ?? null) as Json[] | null;
    const tokenIds = Array.isArray(item.token_ids) ? (item.token_ids as number[]) : null;
    let tokens: number[];
    let old: (number | null)[];
    if (content) {
      tokens = tokenIds ?? content.map((c) => tokenId(String(c.token), names));
      old = content.map((c) => (typeof c.logprob === "number" ? c.logprob : null));
    } else if (allowWithoutLogprobs) {
      tokens = tokenIds ?? messageTokens(message, names);
      old = tokens.map(() => null);
    } else {
      throw new JobError(
        `${where}.messages_and_choices[${i}] is a choice without logprobs; request completions with logprobs: true or set experimental_config.allow_training_without_logprobs.`,
      );
    }
    // An answer that ended by itself ends with `<eos>`: vLLM's token_ids (and
    // this emulator's) hold it; older records without it get it here, unless
    // a stop string (`stop_reason`) ended the answer instead.
    const byStopString = typeof item.stop_reason === "string";
    if (
      item.finish_reason === "stop" &&
      tokens[0] !== TOOL_ID &&
      tokens.at(-1) !== EOS_ID &&
      !byStopString
    ) {
      tokens = [...tokens, EOS_ID];
      old = [...old, null];
    }
    out.push({ features: promptFeatures(context), tokens, oldLogprobs: old, tools: names });
    context.push(message);
  });
  return out;
}

function positionOf(seq: Sequence, pos: number): Position {
  return positionAt(pos, seq.tokens[0], seq.tools.length, seq.tokens[pos]);
}

export interface JobContext {
  store: Store;
  stopped: () => boolean;
  trainingData: TrainingDataAccess;
  /** The file a `wandb-artifact:///` training_data_url names, from the emulator's W&B API. */
  readArtifact?: (url: string) => { text: string } | { error: string };
}

function finish(
  ctx: JobContext,
  job: StoredJob,
  params: Params,
  metrics: Record<string, number>,
): void {
  // A job whose model was deleted has already ended as failed: write nothing.
  if (job.status !== "RUNNING" || !ctx.store.models.has(job.model_id)) return;
  const latest = ctx.store.latestCheckpoint(job.model_id);
  const step = (latest?.step ?? 0) + 1;
  ctx.store.addCheckpoint(job.model_id, step, metrics, params);
  job.checkpoint_step = step;
  job.status = "COMPLETED";
  job.training_end = new Date().toISOString();
  ctx.store.emit(job, "training_ended", { step });
}

function start(ctx: JobContext, job: StoredJob): Params {
  if (job.status !== "QUEUED" || !ctx.store.models.has(job.model_id))
    throw new JobError(`Model ${job.model_id} no longer exists.`);
  const latest = ctx.store.latestCheckpoint(job.model_id);
  if (!latest) throw new JobError(`Model ${job.model_id} has no checkpoint to train from.`);
  job.status = "RUNNING";
  job.training_start = new Date().toISOString();
  return [...usableParams(latest.params)];
}

/** Runs one job to its terminal event; never throws. */
export async function runJob(ctx: JobContext, job: StoredJob): Promise<void> {
  await yieldLoop();
  try {
    if (!ctx.store.models.has(job.model_id))
      throw new JobError(`Model ${job.model_id} no longer exists.`);
    if (job.kind === "rl") await runRL(ctx, job);
    else await runSFT(ctx, job);
  } catch (error) {
    // Gone, or already ended (its model was deleted): one terminal event only.
    if (!ctx.store.jobs.has(job.id) || job.status === "FAILED") return;
    const message = errorMessage(error);
    ctx.store.fail(job, message);
  }
}

/** Group-relative advantages, as ART computes them (src/emulator/MODEL.md, "What it is", says which options change them). */
function advantagesOf(rewards: number[], cfg: Json): number[] | undefined {
  const mean = rewards.reduce((a, b) => a + b, 0) / Math.max(rewards.length, 1);
  const std = Math.sqrt(
    rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(rewards.length, 1),
  );
  if (std < 1e-9) return undefined;
  // normalize_advantages: false turns scale_rewards off as well.
  const scale = cfg.scale_rewards !== false && cfg.normalize_advantages !== false;
  const balance =
    typeof cfg.advantage_balance === "number"
      ? Math.min(1, Math.max(-1, cfg.advantage_balance))
      : 0;
  return rewards.map((r) => {
    const a = scale ? (r - mean) / (std + 1e-6) : r - mean;
    if (balance > 0 && a <= 0) return a * (1 - balance);
    if (balance < 0 && a >= 0) return a * (1 + balance);
    return a;
  });
}

interface TrainableTrajectory {
  /** Each history's trainable turns; a history is what the per-sequence ratio averages over. */
  histories: Sequence[][];
  advantage: number;
}

async function runRL(ctx: JobContext, job: StoredJob): Promise<void> {
  const req = job.request as { trajectory_groups: Json[]; experimental_config?: Json | null };
  const cfg = req.experimental_config ?? {};
  const allow = cfg.allow_training_without_logprobs === true;
  const loss = lossConfig(cfg);
  const lr =
    (typeof cfg.learning_rate === "number" ? cfg.learning_rate : 5e-5) * LEARNING_RATE_SCALE;

  // Parse every group before emitting anything, so bad input fails cleanly.
  const groups: TrainableTrajectory[][] = [];
  const rewards: number[] = [];
  req.trajectory_groups.forEach((group, g) => {
    const trajs = (group.trajectories ?? []) as Json[];
    const rs = trajs.map((t) => (typeof t.reward === "number" ? t.reward : 0));
    for (const r of rs) rewards.push(r); // no spread: a group may hold 1,000,000

    const advantages = advantagesOf(rs, cfg);
    if (!advantages) return;
    groups.push(
      trajs.map((t, k) => {
        const where = `trajectory_groups[${g}].trajectories[${k}]`;
        const histories = [
          { items: (t.messages_and_choices ?? []) as unknown[], tools: t.tools },
          ...((t.additional_histories ?? []) as Json[]).map((h) => ({
            items: (h.messages_and_choices ?? []) as unknown[],
            tools: h.tools ?? t.tools,
          })),
        ];
        return {
          histories: histories.map((h, hi) =>
            sequencesOf(
              h.items,
              h.tools,
              allow,
              hi === 0 ? where : `${where}.additional_histories[${hi - 1}]`,
            ),
          ),
          advantage: advantages[k] as number,
        };
      }),
    );
  });
  if (groups.length === 0) {
    throw new JobError(
      "Every trajectory group has rewards that are all equal, so there is nothing to learn; give the trajectories of a group different rewards.",
    );
  }
  const params = start(ctx, job);
  ctx.store.emit(job, "training_started", { num_sequences: groups.length });
  const rewardMean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const rewardStd = Math.sqrt(
    rewards.reduce((a, b) => a + (b - rewardMean) ** 2, 0) / rewards.length,
  );
  let lastLoss = 0;
  for (const group of groups) {
    if (ctx.stopped()) throw new JobError("The emulator was closed while this job ran.");
    if (job.status !== "RUNNING") return; // ended elsewhere (its model was deleted)
    const grad = new Array<number>(params.length).fill(0);
    let lossSum = 0;
    let entropy = 0;
    let tokens = 0;
    let clipped = 0;
    let ratioSum = 0;
    for (const { histories, advantage } of group) {
      for (const seqs of histories) {
        // Every token of the history, with its logprob under the current parameters.
        const steps = seqs
          .flatMap((seq) => {
            let prev = startPrev(seq.features);
            return seq.tokens.map((tok, pos) => {
              const at = positionOf(seq, pos);
              const step = { seq, pos, prev, tok, at };
              prev = tok;
              return { ...step, lp: tokenLogprob(params, seq.features, step.prev, tok, at) };
            });
            // A token the policy cannot say there (an unknown word) has nothing to learn.
          })
          .filter((x) => Number.isFinite(x.lp));
        const terms = historyTerms(
          steps.map((x) => ({
            newLogprob: x.lp,
            oldLogprob: x.seq.oldLogprobs[x.pos] ?? null,
            advantage,
          })),
          loss,
        );
        steps.forEach((x, i) => {
          const weight = terms.weights[i] as number;
          entropy += accumulateLogpGrad(grad, params, x.seq.features, x.prev, x.tok, x.at, weight);
        });
        lossSum += terms.loss;
        clipped += terms.clipped;
        ratioSum += terms.ratioSum;
        tokens += steps.length;
      }
    }
    const n = Math.max(group.length, 1);
    let norm = 0;
    let largest = 0;
    for (let i = 0; i < params.length; i++) {
      const g = (grad[i] as number) / n;
      norm += g * g;
      largest = Math.max(largest, Math.abs(lr * g));
    }
    const shrink = largest > MAX_PARAM_STEP ? MAX_PARAM_STEP / largest : 1;
    for (let i = 0; i < params.length; i++)
      params[i] = (params[i] as number) + (shrink * lr * (grad[i] as number)) / n;
    lastLoss = lossSum / Math.max(tokens, 1);
    ctx.store.emit(job, "gradient_step", {
      loss: lastLoss,
      policy_loss: lastLoss,
      entropy: entropy / Math.max(tokens, 1),
      grad_norm: Math.sqrt(norm),
      learning_rate: lr / LEARNING_RATE_SCALE,
      reward: rewardMean,
      reward_std_dev: rewardStd,
      num_trajectories: group.length,
      num_trainable_tokens: tokens,
      clipped_tokens: clipped,
      mean_importance_ratio: ratioSum / Math.max(tokens, 1),
    });
    await yieldLoop();
  }
  finish(ctx, job, params, {
    reward: rewardMean,
    reward_std_dev: rewardStd,
    loss: lastLoss,
    num_groups_submitted: req.trajectory_groups.length,
    num_groups_trainable: groups.length,
  });
}

/** The examples of an SFT job's data, or a JobError saying why there are none. */
async function readExamples(ctx: JobContext, url: string): Promise<Sequence[][]> {
  let rows: Json[];
  try {
    rows = await loadTrainingRows(url, ctx.trainingData, ctx.readArtifact);
  } catch (error) {
    throw error instanceof TrainingDataError ? new JobError(error.message) : error;
  }
  const examples: Sequence[][] = [];
  rows.forEach((row) => {
    const msgs = row.messages as Json[];
    const names = toolNames(row.tools);
    const seqs: Sequence[] = [];
    msgs.forEach((m, k) => {
      if (m?.role !== "assistant") return;
      const tokens = messageTokens(m, names);
      if (tokens[0] !== TOOL_ID) tokens.push(EOS_ID);
      seqs.push({
        features: promptFeatures(msgs.slice(0, k)),
        tokens,
        oldLogprobs: [],
        tools: names,
      });
    });
    if (seqs.length) examples.push(seqs);
  });
  if (examples.length === 0)
    throw new JobError("The training data has no assistant turns to learn from.");
  return examples;
}

async function runSFT(ctx: JobContext, job: StoredJob): Promise<void> {
  const req = job.request as { training_data_url: string; config?: Json | null };
  let examples: Sequence[][];
  try {
    examples = await readExamples(ctx, req.training_data_url);
  } catch (error) {
    // The data is read once the job runs: a job whose data is unusable has
    // started like any other, so its events come in the same order.
    if (error instanceof JobError) {
      start(ctx, job);
      ctx.store.emit(job, "training_started", { num_sequences: 0 });
    }
    throw error;
  }
  const cfg = req.config ?? {};
  const batchSize = typeof cfg.batch_size === "number" ? cfg.batch_size : 4;
  const batches: Sequence[][][] = [];
  for (let i = 0; i < examples.length; i += batchSize)
    batches.push(examples.slice(i, i + batchSize));
  const lrs = cfg.learning_rate;
  const params = start(ctx, job);
  ctx.store.emit(job, "training_started", { num_sequences: batches.length });
  let lastLoss = 0;
  for (const [b, batch] of batches.entries()) {
    if (ctx.stopped()) throw new JobError("The emulator was closed while this job ran.");
    if (job.status !== "RUNNING") return; // ended elsewhere (its model was deleted)
    const baseLr = Array.isArray(lrs)
      ? (lrs[Math.min(b, lrs.length - 1)] as number)
      : typeof lrs === "number"
        ? lrs
        : 5e-5;
    const lr = baseLr * SFT_LEARNING_RATE_SCALE;
    const grad = new Array<number>(params.length).fill(0);
    let loss = 0;
    let tokens = 0;
    for (const seq of batch.flat()) {
      let prev = startPrev(seq.features);
      seq.tokens.forEach((tok, pos) => {
        const at = positionOf(seq, pos);
        const before = prev;
        prev = tok;
        const lp = tokenLogprob(params, seq.features, before, tok, at);
        if (!Number.isFinite(lp)) return; // a word the policy cannot say
        loss -= lp;
        accumulateLogpGrad(grad, params, seq.features, before, tok, at, 1);
        tokens++;
      });
    }
    for (let i = 0; i < params.length; i++)
      params[i] = (params[i] as number) + (lr * (grad[i] as number)) / Math.max(tokens, 1);
    lastLoss = loss / Math.max(tokens, 1);
    ctx.store.emit(job, "gradient_step", {
      loss: lastLoss,
      learning_rate: baseLr,
      num_tokens: tokens,
      num_trainable_tokens: tokens,
    });
    await yieldLoop();
  }
  finish(ctx, job, params, { loss: lastLoss, num_examples: examples.length });
}
