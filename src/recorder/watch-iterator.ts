// The side-watching iterator both streamed wrappers (chat chunks, Responses
// and Messages events) put over the SDK's stream: the caller reads the SDK's
// own steps, and the recorder sees each one as it settles.

/** A stream whose `iterator()` the SDK's own iteration goes through. */
export type IterableStream<T> = { iterator: () => AsyncIterator<T> };

/**
 * Replaces `stream.iterator` with one that hands the caller the SDK's own
 * step promises and watches each from the side: `onStep` with every result
 * (the last one `done`), `onError` with a rejection, and `onReturn` after an
 * early `return()` (a `break`) has let the SDK end its stream.
 */
export function watchIterator<T>(
  stream: IterableStream<T>,
  onStep: (r: IteratorResult<T>) => void,
  onError: (error: unknown) => void,
  onReturn: () => void,
): void {
  const inner = stream.iterator.bind(stream);
  stream.iterator = () => {
    const it = inner();
    // A plain iterator object rather than an async generator, so that no
    // promise of the recorder's stands between a step and the caller; the
    // recorder's reaction, registered first, runs first.
    const iterator: AsyncIterator<T> & AsyncIterable<T> = {
      next: () => {
        const step = it.next();
        step.then(onStep, onError);
        return step;
      },
      return: async (value?: unknown) => {
        const r = (await it.return?.(value)) ?? { done: true as const, value: undefined };
        onReturn();
        return r as IteratorResult<T>;
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  };
}
