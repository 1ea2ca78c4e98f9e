/**
 * What to say about a thrown value: an Error's message, anything else as text.
 *
 * @example
 * trajectory.log(`rollout failed: ${errorMessage(error)}`);
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
