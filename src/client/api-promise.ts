// A Promise of the parsed body that can also hand back the raw Response.
import { InvalidArgumentError } from "../util/argument-error.js";

/** The parsed body of a call with its HTTP response ({@link APIPromise.WithResponse}). */
export type WithResponse<T> = APIPromise.WithResponse<T>;

/**
 * What every client call returns: a real Promise of the parsed body, plus
 * `withResponse()` for the body and the `Response`, and `asResponse()` for the
 * `Response` alone (its body already read: use `withResponse()` for data).
 *
 * @example
 * const { data: model, response } = await client.models.create(params).withResponse();
 * console.log(response.headers.get("x-request-id"));
 */
export class APIPromise<T> extends Promise<T> {
  readonly #raw: Promise<APIPromise.WithResponse<T>>;
  #parsed: Promise<T> | undefined;

  constructor(raw: Promise<APIPromise.WithResponse<T>>) {
    // Checked here: a bad `raw` would otherwise surface at the first await, far from its cause.
    if (typeof (raw as { then?: unknown } | null)?.then !== "function")
      throw new InvalidArgumentError(
        "new APIPromise(raw)",
        "raw",
        "a promise of { data, response }",
        raw,
      );
    // The executor is a placeholder: every Promise method below reads #raw.
    super((resolve) => resolve(null as T));
    this.#raw = raw;
  }

  // Derived promises (from then/catch) are plain Promises, not APIPromises.
  /** Promises derived with `then`/`catch` are plain `Promise`s. */
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The parsed body and the `Response`. */
  withResponse(): Promise<APIPromise.WithResponse<T>> {
    return this.#raw;
  }

  /** The `Response` alone. */
  asResponse(): Promise<Response> {
    return this.#raw.then((r) => r.response);
  }

  #data(): Promise<T> {
    this.#parsed ??= this.#raw.then((r) => r.data);
    return this.#parsed;
  }

  /** Resolves with the parsed body, as awaiting the call does. */
  // biome-ignore lint/suspicious/noThenProperty: this class is a Promise on purpose.
  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#data().then(onfulfilled, onrejected);
  }

  /** As `Promise.prototype.catch`, on the parsed body. */
  override catch<R = never>(
    onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null,
  ): Promise<T | R> {
    return this.#data().catch(onrejected);
  }

  /** As `Promise.prototype.finally`, on the parsed body. */
  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#data().finally(onfinally);
  }
}

/** The types {@link APIPromise} uses. */
export declare namespace APIPromise {
  /** The parsed body of a call together with the HTTP response it came from. */
  export interface WithResponse<T> {
    /** The parsed, checked body. */
    data: T;
    /** The HTTP response (its body already read). */
    response: Response;
  }
}
