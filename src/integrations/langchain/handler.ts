import {
  BaseCallbackHandler,
  type HandleLLMNewTokenCallbackFields,
} from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGeneration, ChatGenerationChunk, LLMResult } from "@langchain/core/outputs";
import {
  type ActiveRollout,
  type ChatCompletionBody,
  currentRollout,
  type RecordedChoice,
  type RecordedCompletion,
  recordedChoices,
  StreamAccumulator,
} from "../../recorder/index.js";
import { errorMessage } from "../../util/index.js";
import { choiceOf, completionChunkOf, rawResponseOf } from "./choices.js";
import { requestOf, usedResponsesApi } from "./request.js";
import { toolResultOf } from "./tool-results.js";

interface Run {
  rollout: ActiveRollout;
}

interface ModelRun extends Run {
  request: RecordedCompletion["request"];
  responsesApi: boolean;
  /** Chunks as LangChain gave them, rebuilt into Chat Completions chunks. */
  chunks: StreamAccumulator;
  /** The wire chunks, when ChatOpenAI keeps them (`__includeRawResponse`). */
  wire: StreamAccumulator;
  streamed: boolean;
  allWire: boolean;
  /** When the model call started, for its chat span. */
  startTime: number;
}

interface ToolRun extends Run {
  name: string;
  toolCallId?: string;
}

/**
 * A LangChain.js callback handler that records every chat model call and tool
 * run made inside `recorder.rollout()` into that rollout's trajectory. Pass it
 * once, on the invoke config (it propagates to every nested model, tool and
 * graph node) or on the model or graph; outside a rollout it does nothing.
 *
 * Each model call is recorded as the Chat Completions request ChatOpenAI sends
 * (messages, tools) and the `Choice` it got back (content, tool calls,
 * finish reason, logprobs), streamed or not. Tool results go to the
 * conversation whose turn called the tool: as the next request carries them,
 * or (a tool run after the last model call, a `returnDirect` tool) at the
 * end of that conversation when the rollout ends.
 *
 * Logprobs exist only when the model asks for them: construct `ChatOpenAI`
 * with `logprobs: true` (or spread {@link chatOpenAIFields}, which also keeps
 * token ids). A call without them is noted in the trajectory's `logs`.
 *
 * @example
 * const recorder = new Recorder();
 * const handler = new TrajectoryCallbackHandler();
 * const model = new ChatOpenAI(chatOpenAIFields({ model: "my-model" }));
 * const agent = createReactAgent({ llm: model, tools: [search] });
 * const trajectory = await recorder.rollout(async (t) => {
 *   const out = await agent.invoke({ messages: [{ role: "user", content: "hi" }] }, { callbacks: [handler] });
 *   t.reward = score(out);
 * });
 */
export class TrajectoryCallbackHandler extends BaseCallbackHandler {
  name = "TrajectoryCallbackHandler";
  // Run inline, not in LangChain's background queue: the rollout is read from
  // the caller's async context, and the trajectory must be complete when
  // invoke() returns.
  override awaitHandlers = true;

  #runs = new Map<string, Run>();

  // Run state lives on the instance; a copy must share it.
  override copy(): this {
    return this;
  }

  #start<R extends Run>(runId: string, parentRunId: string | undefined, make: (run: Run) => R) {
    const parent = parentRunId ? this.#runs.get(parentRunId) : undefined;
    const rollout = parent?.rollout ?? currentRollout();
    if (!rollout) return;
    const run = make({ rollout });
    this.#runs.set(runId, run);
    // LangChain never ends some runs (a `.stream()` the caller stopped reading
    // stops without an end or error callback): the rollout's end records what
    // such a run got so far and lets it go. Run ids are unique, and the
    // callback holds the id only, so ended runs are not kept alive.
    rollout.onEnd?.(() => this.#abandon(runId));
  }

  #abandon(runId: string): void {
    const run = this.#runs.get(runId);
    if (!run) return;
    if ((run as ModelRun).chunks) {
      const error = new Error("the rollout ended before LangChain ended this call");
      this.#recordUnfinished(run as ModelRun, "incomplete", error);
    }
    this.#end(runId);
  }

  #end(runId: string): void {
    this.#runs.delete(runId);
  }

  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
  ): void {
    this.#start(runId, parentRunId, (run) => run);
  }

  override handleChainEnd(_outputs: unknown, runId: string): void {
    this.#end(runId);
  }

  override handleChainError(_error: unknown, runId: string): void {
    this.#end(runId);
  }

  override handleChatModelStart(
    _llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
  ): void {
    this.#start(runId, parentRunId, (run): ModelRun => {
      const params = (extraParams?.invocation_params ?? {}) as Record<string, unknown>;
      const request = requestOf(messages[0] ?? [], params);
      return {
        ...run,
        request,
        responsesApi: usedResponsesApi(params),
        chunks: new StreamAccumulator(),
        wire: new StreamAccumulator(),
        streamed: false,
        allWire: true,
        startTime: Date.now(),
      };
    });
  }

  override handleLLMNewToken(
    _token: string,
    _idx: unknown,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    fields?: HandleLLMNewTokenCallbackFields,
  ): void {
    const run = this.#runs.get(runId) as ModelRun | undefined;
    const chunk = fields?.chunk as ChatGenerationChunk | undefined;
    if (!run?.chunks || !chunk?.message) return;
    // LangChain overwrites generationInfo (and so the logprobs) when it
    // concatenates chunks, so every chunk is accumulated here as it arrives.
    run.streamed = true;
    const completion = completionChunkOf(chunk);
    run.chunks.add(completion);
    const wire = rawResponseOf(chunk.message, "chat.completion.chunk");
    if (wire) run.wire.add(wire);
    else if (completion.choices.length) run.allWire = false;
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const run = this.#runs.get(runId) as ModelRun | undefined;
    if (!run?.chunks) return;
    const generations = (output.generations[0] ?? []) as ChatGeneration[];
    const call = run.streamed ? this.#streamedCall(run) : this.#generatedCall(run, generations);
    this.#record(run, call);
    this.#end(runId);
  }

  override handleLLMError(error: unknown, runId: string): void {
    const run = this.#runs.get(runId) as ModelRun | undefined;
    if (!run?.chunks) return;
    const aborted = (error as { name?: string })?.name?.includes("Abort");
    this.#recordUnfinished(run, aborted ? "aborted" : "error", error);
    this.#end(runId);
  }

  /** Records a call that did not complete, with what it streamed before it stopped. */
  #recordUnfinished(run: ModelRun, status: RecordedCompletion["status"], error: unknown): void {
    const partial = run.streamed ? this.#streamedCall(run) : { request: run.request, choices: [] };
    this.#record(run, { ...partial, status, error, streamed: run.streamed });
  }

  #streamedCall(run: ModelRun): RecordedCompletion {
    const acc = run.allWire ? run.wire : run.chunks;
    return {
      request: run.request,
      choices: acc.choices(),
      response: {
        id: acc.id,
        model: acc.model ?? run.chunks.model,
        usage: acc.usage ?? run.chunks.usage,
        prompt_token_ids: acc.promptTokenIds,
      },
      status: acc.finished() ? "complete" : "incomplete",
      streamed: true,
    };
  }

  #generatedCall(run: ModelRun, generations: ChatGeneration[]): RecordedCompletion {
    const first = generations[0]?.message;
    const wire = rawResponseOf(first, "chat.completion");
    const meta = (first?.response_metadata ?? {}) as Record<string, any>;
    const choices: RecordedChoice[] = wire
      ? recordedChoices(wire as ChatCompletionBody)
      : generations.map((g, i) => choiceOf(g, i));
    return {
      request: run.request,
      choices,
      response: {
        id: wire?.id ?? first?.id,
        model: wire?.model ?? meta.model_name,
        usage: wire?.usage ?? meta.usage,
        prompt_token_ids: (wire as { prompt_token_ids?: number[] } | undefined)?.prompt_token_ids,
      },
      status: "complete",
    };
  }

  #record(run: ModelRun, call: RecordedCompletion): void {
    const { rollout } = run;
    rollout.recordCompletion({ startTime: run.startTime, ...call });
    const id = call.response?.id ?? "";
    if (run.responsesApi)
      rollout.log(
        `langchain: completion ${id} went through the OpenAI Responses API; recorded from LangChain's messages, without logprobs`,
      );
    if (call.choices.length === 0) return;
    if (rollout.options.logprobs && call.choices.some((c) => !c.logprobs))
      rollout.log(
        `langchain: completion ${id} has no logprobs; construct ChatOpenAI with logprobs: true (or chatOpenAIFields())`,
      );
    if (rollout.options.tokenIds && call.choices.some((c) => !c.token_ids))
      rollout.log(
        `langchain: completion ${id} has no token ids; LangChain keeps them only in the raw response (chatOpenAIFields())`,
      );
  }

  override handleToolStart(
    tool: Serialized,
    _input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.#start(
      runId,
      parentRunId,
      (run): ToolRun => ({
        ...run,
        name: runName ?? String(tool?.id?.at(-1) ?? "tool"),
        toolCallId,
      }),
    );
  }

  override handleToolEnd(output: unknown, runId: string): void {
    const run = this.#runs.get(runId) as ToolRun | undefined;
    // The rollout puts the result in the history whose turn issued the call:
    // a later request that carries it wins (content and order); one no
    // request carries (a returnDirect tool, a sub-agent's last step) is
    // appended there when the rollout ends.
    if (run && "name" in run) {
      const result = toolResultOf(output, run.toolCallId);
      if (result) run.rollout.recordToolResult(result);
    }
    this.#end(runId);
  }

  override handleToolError(error: unknown, runId: string): void {
    const run = this.#runs.get(runId) as ToolRun | undefined;
    if (run && "name" in run)
      run.rollout.log(
        `langchain: tool ${run.name}${run.toolCallId ? ` (${run.toolCallId})` : ""} failed: ${errorMessage(error)}`,
      );
    this.#end(runId);
  }
}
