// Cursor pages: one page of items, the way to the next, and iteration over all.
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { APIPromise } from "./api-promise.js";
import { TrainingClientError } from "./errors.js";

/** Fetches the page that follows `after` (the id of the last item seen). */
export type PageFetcher<T extends { id: string }> = (after: string) => APIPromise<CursorPage<T>>;

/**
 * One page of a list call, following the service's `after` cursor. Iterating
 * it with `for await` yields every item of this page and of every later page.
 *
 * @example
 * const page = await client.models.checkpoints.list(modelId, { limit: 50 });
 * for await (const checkpoint of page) console.log(checkpoint.step);
 */
export class CursorPage<T extends { id: string }> implements AsyncIterable<T> {
  /** Always `"list"`. */
  readonly object: string;
  /** The items of this page. */
  readonly data: T[];
  /** Whether another page follows. */
  readonly has_more: boolean;
  /** Id of the first item of this page; `""` on an empty page, as the service sends it. */
  readonly first_id: string;
  /** Id of the last item of this page; `""` on an empty page. */
  readonly last_id: string;
  readonly #fetchAfter: PageFetcher<T>;

  constructor(
    body: {
      object?: string;
      data: T[];
      has_more?: boolean;
      first_id?: string | null;
      last_id?: string | null;
    },
    // Written out, not PageFetcher: the declaration names no unexported type.
    fetchAfter: (after: string) => APIPromise<CursorPage<T>>,
  ) {
    checkPage(body, fetchAfter);
    this.object = body.object ?? "list";
    this.data = body.data;
    this.has_more = body.has_more ?? false;
    this.first_id = body.first_id ?? "";
    this.last_id = body.last_id ?? "";
    this.#fetchAfter = fetchAfter;
  }

  /** True when the service says more items follow this page. */
  hasNextPage(): boolean {
    return this.has_more && this.data.length > 0;
  }

  /**
   * The next page, fetched with `after` set to this page's last item id.
   * Throws when there is none: check `hasNextPage()` first.
   */
  getNextPage(): APIPromise<CursorPage<T>> {
    const last = this.data.at(-1);
    if (!this.hasNextPage() || !last) {
      return new APIPromise(
        Promise.reject(
          new TrainingClientError("There is no next page: check hasNextPage() first."),
        ),
      );
    }
    return this.#fetchAfter(last.id);
  }

  /** Every page from this one on. */
  async *iterPages(): AsyncGenerator<CursorPage<T>> {
    let page: CursorPage<T> = this;
    yield page;
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      yield page;
    }
  }

  /** Every item of this page and the pages after it, fetched as needed. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * What a list call returns: an {@link APIPromise} of the first page that is also
 * async-iterable over every item of every page.
 *
 * @example
 * for await (const event of client.trainingJobs.events.list(jobId)) console.log(event.type);
 */
export class PagePromise<T extends { id: string }>
  extends APIPromise<CursorPage<T>>
  implements AsyncIterable<T>
{
  constructor(raw: Promise<APIPromise.WithResponse<CursorPage<T>>>) {
    super(raw);
  }

  /** Every item of every page, from the first, fetched as needed. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const page = await this;
    yield* page;
  }
}

function checkPage(body: unknown, fetchAfter: unknown): void {
  const call = "new CursorPage(body, fetchAfter)";
  if (!isObjectLike(body)) throw new InvalidArgumentError(call, "body", "a page object", body);
  if (!Array.isArray(body.data) || !body.data.every((item) => typeof item?.id === "string"))
    throw new InvalidArgumentError(
      call,
      "body.data",
      "an array of items with string ids",
      body.data,
    );
  for (const key of ["object", "first_id", "last_id"])
    if (body[key] != null && typeof body[key] !== "string")
      throw new InvalidArgumentError(call, `body.${key}`, "a string", body[key]);
  if (body.has_more != null && typeof body.has_more !== "boolean")
    throw new InvalidArgumentError(call, "body.has_more", "a boolean", body.has_more);
  if (typeof fetchAfter !== "function")
    throw new InvalidArgumentError(
      call,
      "fetchAfter",
      "a function fetching the page after an id",
      fetchAfter,
    );
}
