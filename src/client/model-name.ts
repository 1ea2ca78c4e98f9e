import { InvalidArgumentError, kindOf } from "../util/argument-error.js";

/** Identifies a trained model for chat completions. */
export interface InferenceModelRef {
  /** The team or user owning the model. */
  entity: string;
  /** The model's project. */
  project: string;
  /** The model's name. */
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
  if (ref === null || typeof ref !== "object")
    throw new InvalidArgumentError(
      "inferenceModelName(ref)",
      "ref",
      "an object { entity, project, name, step? }",
      ref,
    );
  for (const key of ["entity", "project", "name"] as const) {
    const value = ref[key];
    if (typeof value !== "string" || value === "" || value.includes("/")) {
      throw new InvalidArgumentError(
        "inferenceModelName(ref)",
        key,
        'a non-empty string without "/"',
        value,
        // A name is no secret: quoting it shows what was wrong with it.
        `expected a non-empty string without "/", received ${typeof value === "string" ? JSON.stringify(value) : kindOf(value)}`,
      );
    }
  }
  const base = `wandb-artifact:///${ref.entity}/${ref.project}/${ref.name}`;
  if (ref.step === undefined) return base;
  if (!Number.isInteger(ref.step) || ref.step < 0) {
    throw new InvalidArgumentError(
      "inferenceModelName(ref)",
      "step",
      "a non-negative integer",
      ref.step,
      `expected a non-negative integer, received ${typeof ref.step === "number" ? ref.step : kindOf(ref.step)}`,
    );
  }
  return `${base}:step${ref.step}`;
}
