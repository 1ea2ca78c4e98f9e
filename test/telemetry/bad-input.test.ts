import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import { InvalidArgumentError } from "trajectory-recorder";
import { expect, it } from "vitest";
import { recordGradientStepEvent, withTrainingSpan } from "../../src/telemetry/index.js";

it("withTrainingSpan rejects a bad name, attributes or function, naming it", async () => {
  let promise: Promise<unknown> | undefined;
  expect(() => {
    promise = withTrainingSpan("s", {}, 5 as never);
  }).not.toThrow();
  await expect(promise).rejects.toThrow(
    "withTrainingSpan(name, attributes, fn): fn: expected a function, received a number.",
  );
  await expect(withTrainingSpan(Symbol() as never, {}, async () => 1)).rejects.toThrow(
    /name: expected a string, received a symbol/,
  );
  await expect(withTrainingSpan("s", null as never, async () => 1)).rejects.toBeInstanceOf(
    InvalidArgumentError,
  );
});

it("recordGradientStepEvent names a bad span, index or metrics", () => {
  const span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  expect(() => recordGradientStepEvent(span, 1, null as never)).toThrow(
    "recordGradientStepEvent(span, index, metrics): metrics: expected an object of metric values, received null.",
  );
  expect(() => recordGradientStepEvent({} as never, 1, {})).toThrow(
    /span: expected an OpenTelemetry Span, received an object/,
  );
  expect(() => recordGradientStepEvent(span, 2n as never, {})).toThrow(
    /index: expected a finite number, received a BigInt/,
  );
  expect(() => recordGradientStepEvent(span, 1, { loss: 0.3 })).not.toThrow();
});
