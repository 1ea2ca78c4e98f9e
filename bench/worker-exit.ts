// The end of every bench worker process: once its worker is ready, it says
// "ready", and on SIGTERM it closes the worker and prints the CPU time the
// process spent from then on (`cpu <ms>`), which the bench adds up, and any
// lines `more` gives (e.g. the event loop's delay).

/** Starts counting CPU time now; on SIGTERM, closes `worker`, prints the count (and `more()`) and exits. */
export function reportCpuOnSigterm(
  worker: { close(): Promise<unknown> },
  more: () => string[] = () => [],
): void {
  const start = process.cpuUsage();
  process.on("SIGTERM", () => {
    void worker.close().then(() => {
      const cpu = process.cpuUsage(start);
      console.log(`cpu ${(cpu.user + cpu.system) / 1000}`);
      for (const line of more()) console.log(line);
      process.exit(0);
    });
  });
  console.log("ready");
}
