// Spans for shipping groups and for training jobs. Through @opentelemetry/api
// only: without a registered SDK every call here is a no-op.
import { type Attributes, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";

const TRACER_NAME = "trajectory-recorder";

function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Runs `fn` inside a span named `name`, ending it with an error status when `fn`
 * throws (the error is rethrown unchanged).
 *
 * @example
 * await withTrainingSpan("trajectory_recorder.ship", { "trajectory_recorder.split": "train" }, () => model.log(groups));
 */
export async function withTrainingSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const call = "withTrainingSpan(name, attributes, fn)";
  if (typeof name !== "string") throw new InvalidArgumentError(call, "name", "a string", name);
  if (!isObjectLike(attributes) || Array.isArray(attributes))
    throw new InvalidArgumentError(call, "attributes", "an object of span attributes", attributes);
  if (typeof fn !== "function") throw new InvalidArgumentError(call, "fn", "a function", fn);
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      const out = await fn(span);
      span.setStatus({ code: SpanStatusCode.OK });
      return out;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Adds one `gradient_step` span event carrying the step's numeric metrics.
 *
 * @example
 * recordGradientStepEvent(span, 1, { loss: 0.3 });
 */
export function recordGradientStepEvent(
  span: Span,
  index: number,
  metrics: Record<string, unknown>,
): void {
  const call = "recordGradientStepEvent(span, index, metrics)";
  if (typeof (span as Partial<Span> | null)?.addEvent !== "function")
    throw new InvalidArgumentError(call, "span", "an OpenTelemetry Span", span);
  if (typeof index !== "number" || !Number.isFinite(index))
    throw new InvalidArgumentError(call, "index", "a finite number", index);
  if (!isObjectLike(metrics))
    throw new InvalidArgumentError(call, "metrics", "an object of metric values", metrics);
  const attributes: Attributes = { "trajectory_recorder.gradient_step": index };
  for (const [key, value] of Object.entries(metrics)) {
    if (typeof value === "number" || typeof value === "boolean") {
      attributes[`trajectory_recorder.metric.${key}`] = value;
    }
  }
  span.addEvent("gradient_step", attributes);
}
