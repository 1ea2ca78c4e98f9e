// A log line whose text is written when first read. The token lineage check
// says where each split departs (two windows of token ids, a few dozen
// numbers turned into text); at the rollout's end, which its caller waits
// for, only the numbers are read, and the line becomes text when something
// reads `logs` (JSON.stringify, the wire writer, a spread, `logs[i]`).
// `logs` stays a plain array of strings to every reader.

/**
 * Appends to `logs` a line written by `make` when first read (then kept as
 * an ordinary element). Setting the element replaces it as usual.
 */
export function logLazily(logs: string[], make: () => string): void {
  const index = logs.length;
  let line: string | undefined;
  const settle = (value: string) => {
    try {
      Object.defineProperty(logs, index, {
        value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    } catch {
      // A frozen array keeps its accessor: the text is still written once.
    }
  };
  Object.defineProperty(logs, index, {
    enumerable: true,
    configurable: true,
    get() {
      line ??= make();
      settle(line);
      return line;
    },
    set(value: string) {
      settle(value);
    },
  });
}
