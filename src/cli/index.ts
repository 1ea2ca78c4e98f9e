// The `trajectory-recorder` command (the package's bin): see main.ts.
import { createInterface } from "node:readline/promises";
import { main } from "./main.js";

/** A question on the terminal (stderr, so stdout stays the command's result). */
async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  ask,
}).then(
  (code) => {
    // -1: a server keeps the process alive until a signal ends it.
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
