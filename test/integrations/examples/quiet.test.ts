// Every framework example runs against the embedded emulator with the
// recorder's defaults and writes nothing to stderr: no check finding, no
// warning. (Node 22 leg: the framework packages need it.)
import { expect, it } from "vitest";
import { runScript } from "../../quiet/run-example.js";

for (const example of ["openai-agents", "ai-sdk", "langchain", "mastra"]) {
  it(`examples/${example}/main.ts runs and writes nothing to stderr`, async () => {
    const run = await runScript(`examples/${example}/main.ts`);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // It printed the trajectory it recorded.
    expect(run.stdout).toMatch(/"messages_and_choices"/);
  }, 180_000);
}
