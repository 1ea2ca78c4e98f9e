// The `trajectory-recorder` command (the package's bin): see main.ts.
import { main } from "./main.js";

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    // -1: a server keeps the process alive until a signal ends it.
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
