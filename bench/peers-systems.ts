// The six recorders that bench/peers.ts compares, each set up the way its
// own README or docs show, each exporting what it records to the bench's
// loopback sink. The peers are not dependencies of this package: they come
// from the scratch prefix (.bench/peers) through `peers`, a require rooted
// there, so their types are not known here and the few members used are
// typed loosely below.
import type { TrajectoryGroup as Group } from "trajectory-recorder";

/** What the bench calls on a chat client: the SDK's own `create`, for every system. */
export interface ChatClient {
  chat: { completions: { create(body: object): Promise<unknown> } };
}

/** An `openai` module as `require("openai")` returns it. */
export interface OpenAIModule {
  OpenAI: new (options: { apiKey: string; baseURL: string }) => ChatClient;
}

/** One recorder, ready to record calls. */
export interface System {
  /** The caller's client, made from the system's copy of the SDK. */
  client: ChatClient;
  /**
   * Runs one rollout as the system's docs show. Ours opens a rollout and
   * keeps its trajectory for the next flush; the peers trace each call on
   * its own, so their rollout is the work alone.
   */
  rollout(work: () => Promise<unknown>): Promise<void>;
  /** Sends everything recorded so far to the sink and waits until it is sent. */
  flush(): Promise<void>;
}

export interface SetupArgs {
  /** The loopback server that answers the chat calls. */
  baseURL: string;
  /** The loopback sink every system exports to. */
  sink: string;
  /** The copy of `openai` the system wraps or patches (never the raw side's copy). */
  openai: OpenAIModule;
  /** `require` rooted in the scratch prefix where the peers are installed. */
  peers: (id: string) => unknown;
}

export type Setup = (args: SetupArgs) => Promise<System>;

/** What starts the child's one line of results on its stdout. */
export const RESULT_MARK = "PEERS-RESULT ";

const apiKey = "k";
const perCall = (work: () => Promise<unknown>) => work().then(() => {});

export const SYSTEMS: Record<string, Setup> = {
  /**
   * Ours keeps trajectories in memory as it does for users; the flush writes
   * the rollouts finished since the last one with the shipper's wire writer
   * and POSTs them to the sink, so that its export work is counted as the
   * peers' is.
   */
  async ours({ baseURL, sink, openai }) {
    const { Recorder, TrajectoryGroup } = await import("trajectory-recorder");
    // Not public: the shipper's own writer, as bench/logprobs.ts takes it.
    const { groupWirePieces } = await import("../src/trajectory/wire-writer.js");
    const recorder = new Recorder();
    const client = recorder.wrap(
      new openai.OpenAI({ apiKey, baseURL }) as never,
    ) as unknown as ChatClient;
    let finished: Awaited<ReturnType<typeof recorder.rollout>>[] = [];
    return {
      client,
      async rollout(work) {
        finished.push(await recorder.rollout(work));
      },
      async flush() {
        if (finished.length === 0) return;
        const group: Group = new TrajectoryGroup(finished);
        finished = [];
        const issues: Parameters<typeof groupWirePieces>[1] = [];
        const body = [...groupWirePieces(group, issues)].join("");
        if (issues.length) throw new Error(`ours: the wire writer found ${issues.length} issues`);
        const res = await fetch(`${sink}/ours/trajectories`, { method: "POST", body });
        await res.arrayBuffer();
      },
    };
  },

  /** LangSmith: `wrapOpenAI` with tracing on and its `Client` pointed at the sink. */
  async langsmith({ baseURL, sink, openai, peers }) {
    process.env.LANGSMITH_TRACING = "true";
    const { Client } = peers("langsmith") as { Client: new (o: object) => LangSmithClient };
    const { wrapOpenAI } = peers("langsmith/wrappers/openai") as {
      wrapOpenAI: (c: ChatClient, o: object) => ChatClient;
    };
    const ls = new Client({ apiUrl: sink, apiKey });
    const client = wrapOpenAI(new openai.OpenAI({ apiKey, baseURL }), {
      client: ls,
      tracingEnabled: true,
    });
    return { client, rollout: perCall, flush: () => ls.awaitPendingTraceBatches() };
  },

  /** Langfuse v5: `observeOpenAI` and the `LangfuseSpanProcessor` on a `NodeTracerProvider`. */
  async langfuse({ baseURL, sink, openai, peers }) {
    const { LangfuseSpanProcessor } = peers("@langfuse/otel") as {
      LangfuseSpanProcessor: new (o: object) => Flushable;
    };
    const { NodeTracerProvider } = peers("@opentelemetry/sdk-trace-node") as {
      NodeTracerProvider: new (o: object) => { register(): void };
    };
    const { observeOpenAI } = peers("@langfuse/openai") as {
      observeOpenAI: (c: ChatClient) => ChatClient;
    };
    const processor = new LangfuseSpanProcessor({
      publicKey: "pk-lf-bench",
      secretKey: "sk-lf-bench",
      baseUrl: sink,
    });
    new NodeTracerProvider({ spanProcessors: [processor] }).register();
    const client = observeOpenAI(new openai.OpenAI({ apiKey, baseURL }));
    return { client, rollout: perCall, flush: () => processor.forceFlush() };
  },

  /**
   * Braintrust: `wrapOpenAI` with `initLogger`; its app URL is the sink,
   * which answers the login with an organization whose API URL is the sink.
   */
  async braintrust({ baseURL, sink, openai, peers }) {
    const bt = peers("braintrust") as {
      initLogger: (o: object) => { flush(): Promise<void> };
      wrapOpenAI: (c: ChatClient) => ChatClient;
    };
    const logger = bt.initLogger({ projectName: "peers", apiKey, appUrl: sink, asyncFlush: true });
    const client = bt.wrapOpenAI(new openai.OpenAI({ apiKey, baseURL }));
    return { client, rollout: perCall, flush: () => logger.flush() };
  },

  /**
   * OpenInference: `OpenAIInstrumentation` on a `NodeTracerProvider` with a
   * batch span processor and the OTLP/HTTP (protobuf) exporter, as Phoenix's
   * docs set it up; `manuallyInstrument` patches the module it is given.
   */
  async openinference({ baseURL, sink, openai, peers }) {
    const { OpenAIInstrumentation } = peers("@arizeai/openinference-instrumentation-openai") as {
      OpenAIInstrumentation: new (o: object) => { manuallyInstrument(m: OpenAIModule): void };
    };
    const { NodeTracerProvider } = peers("@opentelemetry/sdk-trace-node") as {
      NodeTracerProvider: new (o: object) => Flushable & { register(): void };
    };
    const { BatchSpanProcessor } = peers("@opentelemetry/sdk-trace-base") as {
      BatchSpanProcessor: new (exporter: unknown) => unknown;
    };
    const { OTLPTraceExporter } = peers("@opentelemetry/exporter-trace-otlp-proto") as {
      OTLPTraceExporter: new (o: object) => unknown;
    };
    const provider = new NodeTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${sink}/v1/traces` }))],
    });
    provider.register();
    new OpenAIInstrumentation({ tracerProvider: provider }).manuallyInstrument(openai);
    const client = new openai.OpenAI({ apiKey, baseURL });
    return { client, rollout: perCall, flush: () => provider.forceFlush() };
  },

  /** Traceloop (OpenLLMetry): `initialize` with the sink as its base URL, batching on. */
  async traceloop({ baseURL, sink, openai, peers }) {
    const traceloop = peers("@traceloop/node-server-sdk") as {
      initialize: (o: object) => void;
      forceFlush: () => Promise<void>;
    };
    traceloop.initialize({
      appName: "peers",
      apiKey,
      baseUrl: sink,
      disableBatch: false,
      instrumentModules: { openAI: openai.OpenAI },
      silenceInitializationMessage: true,
      // Off: it would poll the sink for prompts (it only polls traceloop.com anyway).
      traceloopSyncEnabled: false,
    });
    const client = new openai.OpenAI({ apiKey, baseURL });
    return { client, rollout: perCall, flush: () => traceloop.forceFlush() };
  },
};

interface Flushable {
  forceFlush(): Promise<void>;
}
interface LangSmithClient {
  awaitPendingTraceBatches(): Promise<void>;
}

/** The peers' packages, pinned by major, as installed into the scratch prefix. */
export const PEER_PACKAGES = [
  "langsmith@^0.12",
  "@langfuse/openai@^5",
  "@langfuse/otel@^5",
  "braintrust@^3",
  "@arizeai/openinference-instrumentation-openai@^4",
  "@traceloop/node-server-sdk@^0.27",
  // The OpenTelemetry SDK 2.x line (Langfuse's processor wants core 2.x and
  // an exporter below 1.0; the 0.30x exporters belong to SDK 3.x).
  "@opentelemetry/api@~1.9",
  "@opentelemetry/sdk-trace-node@^2",
  "@opentelemetry/sdk-trace-base@^2",
  "@opentelemetry/exporter-trace-otlp-http@~0.223",
  "@opentelemetry/exporter-trace-otlp-proto@~0.223",
];

/** Which installed package each system's version is read from. */
export const VERSION_OF: Record<string, string[]> = {
  ours: [],
  langsmith: ["langsmith"],
  langfuse: ["@langfuse/openai", "@langfuse/otel"],
  braintrust: ["braintrust"],
  openinference: ["@arizeai/openinference-instrumentation-openai"],
  traceloop: ["@traceloop/node-server-sdk", "@traceloop/instrumentation-openai"],
};
