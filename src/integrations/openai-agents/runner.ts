import { type RunConfig, Runner } from "@openai/agents";
import { attachRecorder } from "./hooks.js";
import {
  checkProviderOptions,
  type RecordingModelProviderOptions,
  recordingModelProvider,
} from "./provider.js";

/** Options of {@link recordingRunner}: the provider's options plus any `Runner` config. */
export type RecordingRunnerOptions = RecordingModelProviderOptions &
  Partial<Omit<RunConfig, "modelProvider">>;

/**
 * A `Runner` that records: its models are Chat Completions models over the
 * recording client ({@link recordingModelProvider}) and its tool results go to
 * the current rollout ({@link attachRecorder}). Use it as any runner.
 *
 * @example
 * import OpenAI from "openai";
 * import { Agent, tool } from "@openai/agents";
 * import { Recorder } from "trajectory-recorder";
 * import { recordingRunner } from "trajectory-recorder/openai-agents";
 *
 * const recorder = new Recorder();
 * const runner = recordingRunner({ client: new OpenAI(), recorder });
 * const trajectory = await recorder.rollout(async (t) => {
 *   const result = await runner.run(agent, "What is the weather in Paris?");
 *   t.reward = result.finalOutput?.includes("sunny") ? 1 : 0;
 * });
 */
export function recordingRunner(options: RecordingRunnerOptions): Runner {
  checkProviderOptions("recordingRunner(options)", options);
  const { client, recorder, defaultModel, ...config } = options;
  const runner = new Runner({
    ...config,
    modelProvider: recordingModelProvider({ client, recorder, defaultModel }),
  });
  attachRecorder(runner);
  return runner;
}
