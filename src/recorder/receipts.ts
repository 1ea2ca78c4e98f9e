// Where a recorded completion went (its receipt), and the session a call
// names in its own request options.

/** Where a recorded completion went: its trajectory's receipt id and its call number there (from 1). */
export interface Receipt {
  /** The trajectory's id (`t.id`): what feedback and `GET /v1/trajectories/{id}` take. */
  trajectory_id: string;
  /** The call's number in its trajectory (1 for the first). */
  call: number;
}

const RECEIPTS = new WeakMap<object, Receipt>();

/** Records where `completion` (an object a wrapped client returned) was recorded. */
export function setReceipt(completion: object, receipt: Receipt): void {
  RECEIPTS.set(completion, receipt);
}

/** The receipt of a completion (or stream) a wrapped client returned inside a rollout. */
export function receiptOf(completion: unknown): Receipt | undefined {
  return typeof completion === "object" && completion !== null
    ? RECEIPTS.get(completion)
    : undefined;
}

/** The `x-trajectory-session` header of a call's request options, if it sets one. */
export function sessionHeader(requestOptions: unknown): string | undefined {
  const headers = (requestOptions as { headers?: unknown } | undefined)?.headers;
  if (!headers || typeof headers !== "object") return undefined;
  const value =
    typeof (headers as Headers).get === "function"
      ? (headers as Headers).get("x-trajectory-session")
      : ((headers as Record<string, unknown>)["x-trajectory-session"] ??
        (headers as Record<string, unknown>)["X-Trajectory-Session"]);
  return typeof value === "string" && value !== "" ? value : undefined;
}
