// `emulator`: the Training Service emulator as a server. Keys come from a
// file or the environment so they stay out of `ps`; none is ever printed.
import { parseApiKeys, startEmulator } from "../../emulator/index.js";
import { numberOption, parse, str } from "../args.js";
import { type Command, UsageError } from "../context.js";

export const emulator: Command = {
  name: "emulator",
  summary: "run the Training Service emulator (the whole API, offline, a tiny trainable policy)",
  usage: "[--port 8000] [--host 127.0.0.1] [--api-key-file PATH] [--data-dir DIR] [--upstream URL]",
  details: `Options:
  --port N              TCP port (default 8000; 0 picks a free one)
  --host HOST           address to listen on (default 127.0.0.1)
  --api-key-file PATH   accepted keys, one per line: KEY or KEY ENTITY
  --api-key KEY         an accepted key (repeatable; visible in ps: prefer the file)
  --data-dir DIR        keep state there across restarts (default: in memory)
  --upstream URL        forward chat completions to this OpenAI-compatible /v1 server
                        ($EMULATOR_UPSTREAM_API_KEY is its bearer key)
  --sft-data-dir DIR    SFT jobs may read file:// training data inside DIR only
  --fetch-training-data let SFT jobs fetch http(s):// training data
  --max-body-bytes N    largest request body read (default 64 MiB)

Environment:
  EMULATOR_API_KEYS     accepted keys, comma separated (KEY or KEY ENTITY each)

Without any key, every non-empty key is accepted, as one local user; a warning
is printed when such an emulator listens beyond loopback.`,
  offline: true,
  async run(args, out) {
    const { values } = parse(
      args,
      {
        port: { type: "string" },
        host: { type: "string" },
        "api-key": { type: "string", multiple: true },
        "api-key-file": { type: "string" },
        "data-dir": { type: "string" },
        upstream: { type: "string" },
        "sft-data-dir": { type: "string" },
        "fetch-training-data": { type: "boolean" },
        "max-body-bytes": { type: "string" },
      },
      { min: 0, max: 0, names: "" },
      { service: false },
    );
    const port = numberOption("port", str(values, "port") ?? "8000", { integer: true, min: 0 });
    if ((port as number) > 65535)
      throw new UsageError(`--port must be at most 65535; got ${port}.`);
    const maxBodyBytes = numberOption("max-body-bytes", str(values, "max-body-bytes"), {
      integer: true,
      positive: true,
    });
    const upstream = str(values, "upstream");
    if (upstream !== undefined && !/^https?:\/\/[^/]/.test(upstream)) {
      throw new UsageError(
        `--upstream must be the http:// or https:// base URL of an OpenAI-compatible server, ending in /v1; got ${JSON.stringify(upstream)}.`,
      );
    }
    const keys: Record<string, string> = {};
    for (const key of (values["api-key"] as string[] | undefined) ?? []) keys[key] = "local";
    const fromEnv = process.env.EMULATOR_API_KEYS;
    if (fromEnv?.trim()) Object.assign(keys, parseApiKeys(fromEnv, "EMULATOR_API_KEYS"));
    const keyFile = str(values, "api-key-file");
    const host = str(values, "host") ?? "127.0.0.1";
    const emu = await startEmulator({
      port,
      host,
      apiKeys: Object.keys(keys).length > 0 ? keys : undefined,
      apiKeysFile: keyFile,
      dataDir: str(values, "data-dir"),
      upstream,
      sftDataDir: str(values, "sft-data-dir"),
      fetchTrainingData: values["fetch-training-data"] === true,
      maxBodyBytes,
      onWarning: (message) => out.stderr.write(`warning: ${message}\n`),
    });
    const keyed = Object.keys(keys).length > 0 || keyFile !== undefined;
    const sources = [
      (values["api-key"] as string[] | undefined)?.length ? "--api-key" : "",
      fromEnv?.trim() ? "EMULATOR_API_KEYS" : "",
      keyFile ? `--api-key-file ${keyFile}` : "",
    ].filter(Boolean);
    out.stdout.write(
      [
        `Training Service emulator listening on ${emu.url}`,
        keyed
          ? `Accepted API keys: those from ${sources.join(", ")}.`
          : "Any non-empty API key is accepted.",
        values["data-dir"] ? `State is kept in ${values["data-dir"]}.` : "State is kept in memory.",
        "Point a client at it with:",
        `  export TRAINING_SERVICE_BASE_URL=${emu.url}`,
        `  new OpenAI({ baseURL: "${emu.url}", apiKey: "<your key>" })`,
        "",
      ].join("\n"),
    );
    const shutdown = () => {
      emu.close().then(() => process.exit(0));
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
    return -1;
  },
};
