// The `trajectory-recorder` command: `trajectory-recorder emulator [options]`.
import { parseArgs } from "node:util";
import { startEmulator } from "../emulator/index.js";
import { errorMessage } from "../util/error-message.js";

const USAGE = `Usage: trajectory-recorder emulator [--port 8000] [--host 127.0.0.1] [--api-key KEY]... [--data-dir DIR] [--upstream URL]`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== "emulator") {
    process.stderr.write(`${USAGE}\n`);
    return command === "--help" || command === "-h" ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: "string", default: "8000" },
      host: { type: "string", default: "127.0.0.1" },
      "api-key": { type: "string", multiple: true },
      "data-dir": { type: "string" },
      upstream: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be an integer from 0 to 65535; got ${values.port}.\n`);
    return 2;
  }
  const keys = values["api-key"];
  const emu = await startEmulator({
    port,
    host: values.host,
    apiKeys: keys && keys.length > 0 ? keys : undefined,
    dataDir: values["data-dir"],
    upstream: values.upstream,
  });
  process.stdout.write(
    [
      `Training Service emulator listening on ${emu.url}`,
      keys?.length
        ? "Accepted API keys: the ones given with --api-key."
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
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`${errorMessage(error)}\n`);
    process.exit(1);
  },
);
