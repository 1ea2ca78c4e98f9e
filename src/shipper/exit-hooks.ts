// Flushing on `beforeExit`, `SIGTERM` and `SIGINT`, and a last word on
// `exit`. Handlers exist only while a shipper that asked for them is open.

export interface ExitHookActions {
  /** Whether anything is queued, in flight or training. */
  hasWork: () => boolean;
  flush: () => Promise<unknown>;
  /** Closes within `timeoutMs`, counting and reporting what is left. */
  close: (timeoutMs: number) => Promise<unknown>;
  /** Called on `exit` (which cannot wait): says what is left behind. */
  exiting: () => void;
  /** Deadline of the flush, for every event. */
  timeoutMs: number;
}

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

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
  const onSignal = (signal: NodeJS.Signals) => {
    void actions.close(actions.timeoutMs).finally(() => {
      // With no other handler left, keep the signal's default meaning: the
      // process ends by it (a shell reports 130 for SIGINT, 143 for SIGTERM).
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  const onExit = () => actions.exiting();
  process.on("beforeExit", onBeforeExit);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  process.on("exit", onExit);
  return () => {
    process.off("beforeExit", onBeforeExit);
    for (const signal of SIGNALS) process.off(signal, onSignal);
    process.off("exit", onExit);
  };
}
