// Flushing on `beforeExit` and `SIGTERM`. Handlers exist only while a shipper
// that asked for them is open.

export interface ExitHookActions {
  /** Whether anything is queued, in flight or training. */
  hasWork: () => boolean;
  flush: () => Promise<unknown>;
  /** Closes within `timeoutMs`, counting and reporting what is left. */
  close: (timeoutMs: number) => Promise<unknown>;
  /** Deadline of the flush, for both events. */
  timeoutMs: number;
}

/** Installs the handlers; returns the function that removes them. */
export function installExitHooks(actions: ExitHookActions): () => void {
  let flushing = false;
  const onBeforeExit = () => {
    // `beforeExit` fires again after the flush's work drains; flush once per idle.
    if (flushing || !actions.hasWork()) return;
    flushing = true;
    // The timer also keeps the loop alive while the flush waits on something
    // that does not (a model whose log waits on an unref'd timer, say).
    const deadline = setTimeout(() => void actions.close(0), actions.timeoutMs);
    void actions.flush().finally(() => {
      clearTimeout(deadline);
      flushing = false;
    });
  };
  const onSigterm = () => {
    void actions.close(actions.timeoutMs).finally(() => {
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
