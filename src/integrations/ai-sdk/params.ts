// Inside a rollout, the call options ask the provider for what the recorder
// needs: logprobs, token ids and (for streams) the raw chunks.
import type { LanguageModelV4CallOptions, SharedV4Warning } from "@ai-sdk/provider";
import type { ActiveRollout } from "../../recorder/index.js";

/** What `transformParams` learned that the wrap hooks need later. */
export interface CallState {
  /** Captured at call entry: stream callbacks may run in another async context. */
  rollout: ActiveRollout;
  /** Whether the caller asked for `raw` stream parts; if not, they are dropped again. */
  callerWantsRaw: boolean;
  /** Warnings the added provider options caused, hidden from the caller. */
  ownWarnings: string[];
}

// The wrap hooks receive the very params object transformParams returned.
const states = new WeakMap<object, CallState>();

// Marks call options one recording layer prepared. A model recorded twice (a
// middleware-wrapped model inside an instrumented Mastra agent) sees copies
// of those options further in, and the inner layer lets them through. A
// symbol key survives the copies (object spread keeps it) and never reaches
// the wire (JSON drops it).
const CLAIMED = Symbol.for("trajectory-recorder.ai-sdk.claimed");

/** Whether an outer recording layer already records this call. */
export function claimed(params: object): boolean {
  return (params as { [CLAIMED]?: true })[CLAIMED] === true;
}

export function callState(params: object): CallState | undefined {
  return states.get(params);
}

function camelCase(name: string): string {
  return name.replace(/[_-]([a-z])/g, (m) => (m[1] as string).toUpperCase());
}

type ProviderOptions = NonNullable<LanguageModelV4CallOptions["providerOptions"]>;

function merged(
  options: ProviderOptions,
  key: string,
  ours: Record<string, boolean>,
): ProviderOptions {
  // The caller's own values win over ours.
  return { ...options, [key]: { ...ours, ...(options[key] ?? {}) } as never };
}

/**
 * Provider options that ask for logprobs and token ids. `@ai-sdk/openai` reads
 * `providerOptions.openai` (and validates it, so `return_token_ids` is dropped);
 * `@ai-sdk/openai-compatible` reads the provider's own name and copies keys it
 * does not know into the request body.
 */
function recordingOptions(
  provider: string,
  options: ProviderOptions,
  rollout: ActiveRollout,
): { providerOptions: ProviderOptions; ownWarnings: string[] } {
  const ownWarnings: string[] = [];
  const wants: Record<string, boolean> = {};
  if (rollout.options.logprobs) wants.logprobs = true;
  if (rollout.options.tokenIds) {
    wants.return_token_ids = true;
    wants.return_tokens_as_token_ids = true;
  }
  if (Object.keys(wants).length === 0) return { providerOptions: options, ownWarnings };
  const name = provider.split(".")[0] as string;
  // openai-compatible warns when options come under a non-camelCase name, and
  // keys its providerMetadata by whichever name the caller used: keep theirs.
  const camel = camelCase(name);
  let key = name;
  if (camel !== name) {
    if (options[camel] !== undefined) key = camel;
    else if (options[name] === undefined) ownWarnings.push(`providerOptions key '${name}'`);
  }
  let out = merged(options, key, wants);
  if (key !== "openai" && wants.logprobs) out = merged(out, "openai", { logprobs: true });
  return { providerOptions: out, ownWarnings };
}

/** The call options a recorded call is made with. */
export function prepareParams(
  type: "generate" | "stream",
  params: LanguageModelV4CallOptions,
  model: { provider: string },
  rollout: ActiveRollout,
): LanguageModelV4CallOptions {
  // Only Chat Completions models carry logprobs the recorder can use; other
  // APIs get their options untouched (and the trajectory says why).
  const chat = model.provider.endsWith(".chat");
  const { providerOptions, ownWarnings } = chat
    ? recordingOptions(model.provider, params.providerOptions ?? {}, rollout)
    : { providerOptions: params.providerOptions, ownWarnings: [] };
  const next: LanguageModelV4CallOptions = {
    ...params,
    ...(providerOptions ? { providerOptions } : {}),
    ...(type === "stream" ? { includeRawChunks: true } : {}),
  };
  (next as { [CLAIMED]?: true })[CLAIMED] = true;
  states.set(next, { rollout, callerWantsRaw: params.includeRawChunks === true, ownWarnings });
  return next;
}

/** The warnings without those the recorder's own provider options caused. */
export function callerWarnings<W extends SharedV4Warning>(
  warnings: W[] | undefined,
  state: CallState,
): W[] | undefined {
  if (!warnings || state.ownWarnings.length === 0) return warnings;
  return warnings.filter(
    (w) =>
      !(w.type === "deprecated" && state.ownWarnings.includes((w as { setting: string }).setting)),
  );
}
