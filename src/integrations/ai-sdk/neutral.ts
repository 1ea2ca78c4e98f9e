// The AI SDK's provider-neutral prompt and output in Chat Completions form.
// Used when the provider does not speak Chat Completions (the Responses API,
// other vendors) or when a call failed before a wire body existed: the
// conversation and tool calls are still recorded, without logprobs.
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Message,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";
import type { RecordedChoice, RecordedCompletion } from "../../recorder/index.js";

type ChatMessage = Record<string, unknown>;
type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

/**
 * A tool output as the tool message content providers send (text as is,
 * anything else as JSON), the same rule `@ai-sdk/openai-compatible` follows.
 */
export function toolOutputText(output: LanguageModelV4ToolResultOutput | undefined): string {
  if (!output) return "";
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "execution-denied":
      return output.reason ?? "Tool call execution denied.";
    default:
      return JSON.stringify(output.value);
  }
}

function textOf(parts: ReadonlyArray<{ type: string; text?: string }>): string | null {
  const texts = parts.filter((p) => p.type === "text").map((p) => p.text ?? "");
  return texts.length ? texts.join("") : null;
}

function toChatMessages(message: LanguageModelV4Message): ChatMessage[] {
  switch (message.role) {
    case "system":
      return [{ role: "system", content: message.content }];
    case "user":
      return [{ role: "user", content: textOf(message.content) ?? "" }];
    case "assistant": {
      const toolCalls: ToolCall[] = message.content.flatMap((p) =>
        p.type === "tool-call" && !p.providerExecuted
          ? [
              {
                id: p.toolCallId,
                type: "function" as const,
                function: {
                  name: p.toolName,
                  arguments: typeof p.input === "string" ? p.input : JSON.stringify(p.input),
                },
              },
            ]
          : [],
      );
      return [
        {
          role: "assistant",
          content: textOf(message.content),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
      ];
    }
    case "tool":
      return message.content.flatMap((p) =>
        p.type === "tool-result"
          ? [{ role: "tool", tool_call_id: p.toolCallId, content: toolOutputText(p.output) }]
          : [],
      );
    default:
      return [];
  }
}

/** The request of a call in Chat Completions form, built from the call options. */
export function requestFromParams(
  params: LanguageModelV4CallOptions,
  modelId: string,
): RecordedCompletion["request"] {
  const tools = (params.tools ?? []).flatMap((t) =>
    t.type === "function"
      ? [
          {
            type: "function" as const,
            function: {
              name: t.name,
              ...(t.description ? { description: t.description } : {}),
              parameters: t.inputSchema as Record<string, unknown>,
            },
          },
        ]
      : [],
  );
  return {
    model: modelId,
    messages: (params.prompt ?? []).flatMap(toChatMessages) as never,
    ...(tools.length ? { tools } : {}),
  };
}

const FINISH: Record<string, RecordedChoice["finish_reason"]> = {
  stop: "stop",
  length: "length",
  "content-filter": "content_filter",
  "tool-calls": "tool_calls",
};

/** A finish reason of any AI SDK version (`"stop"` or `{ unified: "stop" }`) in OpenAI's words. */
export function finishReasonOf(reason: unknown): RecordedChoice["finish_reason"] {
  const unified =
    typeof reason === "string" ? reason : (reason as { unified?: string } | undefined)?.unified;
  return FINISH[unified ?? ""] ?? "stop";
}

/** Output the provider reported, gathered into one Choice (no logprobs). */
export class NeutralChoice {
  #text: string | null = null;
  #reasoning: string | null = null;
  #toolCalls: ToolCall[] = [];
  finishReason: unknown;

  addText(text: string): void {
    this.#text = (this.#text ?? "") + text;
  }

  /** Reasoning the provider reported, kept as a reasoning model's Choice carries it. */
  addReasoning(text: string): void {
    this.#reasoning = (this.#reasoning ?? "") + text;
  }

  addToolCall(part: { toolCallId: string; toolName: string; input: unknown }): void {
    const args = typeof part.input === "string" ? part.input : JSON.stringify(part.input);
    this.#toolCalls.push({
      id: part.toolCallId,
      type: "function",
      function: { name: part.toolName, arguments: args },
    });
  }

  addContent(content: ReadonlyArray<LanguageModelV4Content>): void {
    for (const part of content) {
      if (part.type === "text") this.addText(part.text);
      else if (part.type === "reasoning") this.addReasoning(part.text);
      else if (part.type === "tool-call" && !part.providerExecuted) this.addToolCall(part);
    }
  }

  choice(): RecordedChoice {
    return {
      index: 0,
      finish_reason: finishReasonOf(this.finishReason),
      logprobs: null,
      message: {
        role: "assistant",
        content: this.#text,
        refusal: null,
        ...(this.#reasoning !== null ? { reasoning_content: this.#reasoning } : {}),
        ...(this.#toolCalls.length ? { tool_calls: this.#toolCalls } : {}),
      } as RecordedChoice["message"],
    };
  }
}
