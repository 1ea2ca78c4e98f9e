// The demo: a tool-using agent trained end to end on the embedded emulator.
//
//   npm run demo                          # 8 steps, report in examples/demo/out/
//   npm run demo -- --steps 4 --report examples/demo/out/report.html
//
// The whole demo lives in the package (`runDemo`, also `npx trajectory-recorder
// demo`); this file only calls it.
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runDemo } from "../../src/demo/index.js";

const { values } = parseArgs({
  options: { steps: { type: "string" }, report: { type: "string" } },
});
const started = Date.now();
runDemo({
  steps: values.steps === undefined ? undefined : Number(values.steps),
  reportPath:
    values.report ?? fileURLToPath(new URL("./out/trajectory-report.html", import.meta.url)),
})
  .then(() => console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`))
  .catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
