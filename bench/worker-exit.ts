// The end of every bench worker process: once its worker is ready, it says
// "ready", and on SIGTERM it closes the worker and prints the CPU time the
// process spent from then on (`cpu <ms>`), which the bench adds up.

/** Starts counting CPU time now; on SIGTERM, closes `worker`, prints the count and exits. */
export function reportCpuOnSigterm(worker: { close(): Promise<unknown> }): void {
  const start = process.cpuUsage();
  process.on("SIGTERM", () => {
    void worker.close().then(() => {
      const cpu = process.cpuUsage(start);
      console.log(`cpu ${(cpu.user + cpu.system) / 1000}`);
      process.exit(0);
    });
  });
  console.log("ready");
}
