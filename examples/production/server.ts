// Runs the chat service until Ctrl-C: `npx tsx examples/production/server.ts
// [--port 8080] [--store DIR]`. Open the printed URL, chat, click a thumb;
// then read the trajectory back with `trajectory-recorder sessions list --store DIR`
// once the service has stopped (the store is locked while it runs).
import { parseArgs } from "node:util";
import { startChatService } from "./service.js";

const { values } = parseArgs({
  options: { port: { type: "string" }, store: { type: "string" } },
});
const port = Number(values.port ?? 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535)
  throw new Error(`--port must be a whole number from 0 to 65535; got ${values.port}.`);

const service = await startChatService({ port, storeDir: values.store });
console.log(`Chat service on ${service.url}`);
console.log(`  recording proxy: ${service.proxyURL}`);
console.log(`  store:           ${service.storeDir}`);

const stop = () => {
  service.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
