// `jobs follow`, `train` and `sft`: a live bar of gradient steps and metrics
// on a terminal, one plain line per event otherwise (logs, CI, pipes).
import type { TrainingProgress } from "../training/index.js";
import type { Output } from "./context.js";

const SHOWN = ["loss", "reward", "policy_loss", "mean_importance_ratio", "grad_norm"];

function metricsText(data: Record<string, unknown>): string {
  const keys = SHOWN.filter((k) => typeof data[k] === "number");
  return keys.map((k) => `${k}=${(data[k] as number).toFixed(4)}`).join(" ");
}

/** An `onEvent` that draws the job's progress on stderr. */
export function jobProgress(
  out: Output,
  jobId: string,
): {
  onEvent: (p: TrainingProgress) => void;
  end(): void;
} {
  const tty = out.stderr.isTTY === true;
  const label = `job ${jobId.slice(0, 8)}`;
  let drawn = false;
  let last = "";
  return {
    onEvent(p) {
      if (!tty) {
        const line =
          p.type === "training_started"
            ? `${label} started: ${p.totalSteps} gradient steps`
            : p.type === "gradient_step"
              ? `${label} step ${p.gradientSteps}/${p.totalSteps || "?"} ${metricsText(p.data)}`.trimEnd()
              : `${label} ${p.type.replace("training_", "")}`;
        out.stderr.write(`${line}\n`);
        return;
      }
      if (p.type === "gradient_step") last = metricsText(p.data);
      const total = p.totalSteps || p.gradientSteps || 1;
      const width = 20;
      const filled = Math.min(width, Math.round((p.gradientSteps / total) * width));
      const bar = `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
      out.stderr.write(`\r\x1b[K${label} ${bar} ${p.gradientSteps}/${p.totalSteps || "?"} ${last}`);
      drawn = true;
    },
    end() {
      if (drawn) out.stderr.write("\n");
    },
  };
}
