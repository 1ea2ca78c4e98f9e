/** Identifies a trained model for chat completions. */
export interface InferenceModelRef {
  entity: string;
  project: string;
  name: string;
  /** A checkpoint step; omitted means the latest checkpoint. */
  step?: number | undefined;
}

/**
 * The `model` string chat completions take for a trained model:
 * `wandb-artifact:///entity/project/name`, or `...:stepN` pinned to a step.
 *
 * @example
 * inferenceModelName({ entity: "me", project: "demo", name: "agent-001", step: 5 });
 * // "wandb-artifact:///me/demo/agent-001:step5"
 */
export function inferenceModelName(ref: InferenceModelRef): string {
  for (const key of ["entity", "project", "name"] as const) {
    const value = ref[key];
    if (typeof value !== "string" || value === "" || value.includes("/")) {
      throw new TypeError(
        `inferenceModelName: ${key} must be a non-empty string without "/", got ${JSON.stringify(value)}.`,
      );
    }
  }
  const base = `wandb-artifact:///${ref.entity}/${ref.project}/${ref.name}`;
  if (ref.step === undefined) return base;
  if (!Number.isInteger(ref.step) || ref.step < 0) {
    throw new TypeError(
      `inferenceModelName: step must be a non-negative integer, got ${ref.step}.`,
    );
  }
  return `${base}:step${ref.step}`;
}
