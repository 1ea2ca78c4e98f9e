// Flushing on `beforeExit` and `SIGTERM`. Handlers exist only while a shipper
// that asked for them is open.

/** Installs the handlers; returns the function that removes them. */
export function installExitHooks(
  flush: () => Promise<unknown>,
  close: () => Promise<unknown>,
): () => void {
  let flushing = false;
  const onBeforeExit = () => {
    // `beforeExit` fires again after the flush's work drains; flush once per idle.
    if (flushing) return;
    flushing = true;
    void flush().finally(() => {
      flushing = false;
    });
  };
  const onSigterm = () => {
    void close().finally(() => {
      // With no other SIGTERM handler left, keep the default meaning: exit.
      if (process.listenerCount("SIGTERM") === 0) process.kill(process.pid, "SIGTERM");
    });
  };
  process.on("beforeExit", onBeforeExit);
  process.on("SIGTERM", onSigterm);
  return () => {
    process.off("beforeExit", onBeforeExit);
    process.off("SIGTERM", onSigterm);
  };
}
