// RL and SFT updates of the policy, run as background jobs that emit events.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import {
  accumulateLogpGrad,
  contentText,
  EOS_ID,
  type Mask,
  type Params,
  promptFeature,
  TOOL_ID,
  tokenId,
  tokenize,
  tokenLogprob,
} from "./model.js";
import type { Store, StoredJob } from "./store.js";

/** ART-style learning rates (1e-6..1e-4) are tiny for this model; they are multiplied by this. */
export const LEARNING_RATE_SCALE = 20_000;

class JobError extends Error {}

const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Sequence {
  feature: number;
  tokens: number[];
  oldLogprobs: (number | null)[];
  toolsOffered: boolean;
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
  const toolsOffered = Array.isArray(tools) && tools.length > 0;
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
      tokens = tokenIds ?? content.map((c) => tokenId(String(c.token)));
      old = content.map((c) => (typeof c.logprob === "number" ? c.logprob : null));
    } else if (allowWithoutLogprobs) {
      tokens =
        tokenIds ??
        (Array.isArray(message.tool_calls) && message.tool_calls.length
          ? [TOOL_ID]
          : tokenize(contentText(message.content)));
      old = tokens.map(() => null);
    } else {
      throw new JobError(
        `${where}.messages_and_choices[${i}] is a choice without logprobs; request completions with logprobs: true or set experimental_config.allow_training_without_logprobs.`,
      );
    }
    if (item.finish_reason === "stop" && tokens.at(-1) !== TOOL_ID) {
      tokens = [...tokens, EOS_ID];
      old = [...old, null];
    }
    out.push({ feature: promptFeature(context), tokens, oldLogprobs: old, toolsOffered });
    context.push(message);
  });
  return out;
}

function maskAt(seq: Sequence, pos: number): Mask {
  return { allowTool: seq.toolsOffered && pos === 0, forceTool: false };
}

export interface JobContext {
  store: Store;
  stopped: () => boolean;
}

function finish(
  ctx: JobContext,
  job: StoredJob,
  params: Params,
  metrics: Record<string, number>,
): void {
  const latest = ctx.store.latestCheckpoint(job.model_id);
  const step = (latest?.step ?? 0) + 1;
  ctx.store.addCheckpoint(job.model_id, step, metrics, params);
  job.checkpoint_step = step;
  job.status = "COMPLETED";
  job.training_end = new Date().toISOString();
  ctx.store.emit(job, "training_ended", { step });
}

function start(ctx: JobContext, job: StoredJob): Params {
  const latest = ctx.store.latestCheckpoint(job.model_id);
  if (!latest) throw new JobError(`Model ${job.model_id} has no checkpoint to train from.`);
  job.status = "RUNNING";
  job.training_start = new Date().toISOString();
  return [...latest.params];
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
    if (!ctx.store.jobs.has(job.id)) return;
    const message = error instanceof Error ? error.message : String(error);
    ctx.store.fail(job, message);
  }
}

async function runRL(ctx: JobContext, job: StoredJob): Promise<void> {
  const req = job.request as { trajectory_groups: Json[]; experimental_config?: Json | null };
  const cfg = req.experimental_config ?? {};
  const allow = cfg.allow_training_without_logprobs === true;
  const scale = cfg.scale_rewards !== false;
  const eps = typeof cfg.epsilon === "number" ? cfg.epsilon : 0.2;
  const epsHigh = typeof cfg.epsilon_high === "number" ? cfg.epsilon_high : eps;
  const lr =
    (typeof cfg.learning_rate === "number" ? cfg.learning_rate : 5e-5) * LEARNING_RATE_SCALE;
  const usePpo = cfg.ppo !== false;
  const lossFn = cfg.loss_fn === "cispo" ? "cispo" : "ppo";

  // Parse every group before emitting anything, so bad input fails cleanly.
  const groups: { seqs: Sequence[]; advantage: number }[][] = [];
  const rewards: number[] = [];
  req.trajectory_groups.forEach((group, g) => {
    const trajs = (group.trajectories ?? []) as Json[];
    const rs = trajs.map((t) => (typeof t.reward === "number" ? t.reward : 0));
    rewards.push(...rs);
    const mean = rs.reduce((a, b) => a + b, 0) / Math.max(rs.length, 1);
    const std = Math.sqrt(rs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(rs.length, 1));
    if (std < 1e-9) return;
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
        const seqs = histories.flatMap((h, hi) =>
          sequencesOf(
            h.items,
            h.tools,
            allow,
            hi === 0 ? where : `${where}.additional_histories[${hi - 1}]`,
          ),
        );
        const adv = scale ? (rs[k]! - mean) / (std + 1e-6) : rs[k]! - mean;
        return { seqs, advantage: adv };
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
    const grad = new Array<number>(params.length).fill(0);
    let loss = 0;
    let entropy = 0;
    let tokens = 0;
    let clipped = 0;
    for (const { seqs, advantage } of group) {
      for (const seq of seqs) {
        let prev = EOS_ID;
        seq.tokens.forEach((tok, pos) => {
          const mask = maskAt(seq, pos);
          const newLp = tokenLogprob(params, seq.feature, prev, tok, mask);
          const old = seq.oldLogprobs[pos] ?? newLp;
          const ratio = Math.exp(newLp - old);
          let weight: number;
          if (lossFn === "cispo") weight = Math.min(ratio, 1 + epsHigh) * advantage;
          else if (!usePpo) weight = advantage;
          else if ((advantage > 0 && ratio > 1 + epsHigh) || (advantage < 0 && ratio < 1 - eps)) {
            weight = 0;
            clipped++;
          } else weight = ratio * advantage;
          loss -= (usePpo && lossFn === "ppo" ? ratio : newLp) * advantage;
          entropy += accumulateLogpGrad(grad, params, seq.feature, prev, tok, mask, weight);
          tokens++;
          prev = tok;
        });
      }
    }
    const n = Math.max(group.length, 1);
    let norm = 0;
    for (let i = 0; i < params.length; i++) {
      const g = (grad[i] as number) / n;
      norm += g * g;
      params[i] = (params[i] as number) + lr * g;
    }
    lastLoss = loss / Math.max(tokens, 1);
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

async function loadJsonl(url: string): Promise<string> {
  if (url.startsWith("file://")) return readFile(fileURLToPath(url), "utf8");
  if (/^https?:\/\//.test(url)) {
    const res = await fetch(url);
    if (!res.ok)
      throw new JobError(`Fetching training_data_url ${url} answered HTTP ${res.status}.`);
    return res.text();
  }
  throw new JobError(
    `training_data_url must be a file:// or http(s):// URL in the emulator; got ${JSON.stringify(url)}.`,
  );
}

async function runSFT(ctx: JobContext, job: StoredJob): Promise<void> {
  const req = job.request as { training_data_url: string; config?: Json | null };
  let text: string;
  try {
    text = await loadJsonl(req.training_data_url);
  } catch (error) {
    if (error instanceof JobError) throw error;
    throw new JobError(
      `Could not read training_data_url ${req.training_data_url}: ${(error as Error).message}`,
    );
  }
  const examples: Sequence[][] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let row: Json;
    try {
      row = JSON.parse(line) as Json;
    } catch {
      throw new JobError(`Line ${i + 1} of the training data is not JSON.`);
    }
    if (!Array.isArray(row.messages))
      throw new JobError(`Line ${i + 1} of the training data has no messages array.`);
    const msgs = row.messages as Json[];
    const toolsOffered = Array.isArray(row.tools) && row.tools.length > 0;
    const seqs: Sequence[] = [];
    msgs.forEach((m, k) => {
      if (m.role !== "assistant") return;
      const hasTools = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
      const tokens = hasTools ? [TOOL_ID] : [...tokenize(contentText(m.content)), EOS_ID];
      seqs.push({
        feature: promptFeature(msgs.slice(0, k)),
        tokens,
        oldLogprobs: [],
        toolsOffered,
      });
    });
    if (seqs.length) examples.push(seqs);
  });
  if (examples.length === 0)
    throw new JobError("The training data has no assistant turns to learn from.");
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
    const baseLr = Array.isArray(lrs)
      ? (lrs[Math.min(b, lrs.length - 1)] as number)
      : typeof lrs === "number"
        ? lrs
        : 5e-5;
    const lr = baseLr * LEARNING_RATE_SCALE;
    const grad = new Array<number>(params.length).fill(0);
    let loss = 0;
    let tokens = 0;
    for (const seq of batch.flat()) {
      let prev = EOS_ID;
      seq.tokens.forEach((tok, pos) => {
        const mask = maskAt(seq, pos);
        loss -= tokenLogprob(params, seq.feature, prev, tok, mask);
        accumulateLogpGrad(grad, params, seq.feature, prev, tok, mask, 1);
        tokens++;
        prev = tok;
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
