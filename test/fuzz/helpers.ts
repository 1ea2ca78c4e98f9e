import { inspect } from "node:util";
import fc from "fast-check";
import { formatZodPath } from "trajectory-recorder/wire";
import { expect } from "vitest";

/** Fixed, so a failure replays; fast-check prints it with the counterexample. */
export const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
export const SECRET = "sk-fuzz-SECRET-7f3a9c1e5b";

/** Runs a property with the fixed seed, printing it when the property fails. */
export async function check<T>(
  arb: fc.Arbitrary<T>,
  run: (value: T) => Promise<void>,
  numRuns: number,
) {
  await fc.assert(fc.asyncProperty(arb, run), {
    seed: SEED,
    numRuns,
    endOnFailure: true,
    verbose: fc.VerbosityLevel.None,
  });
}

/** Values of every JavaScript kind, BigInt, symbols and odd prototypes included. */
export const anything = fc.anything({
  maxDepth: 3,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withSparseArray: true,
  withTypedArray: true,
  withObjectString: true,
});
export const weird = fc.oneof(
  anything,
  fc.constantFrom(Symbol("s"), () => 1, Number.NaN, -0, 2n ** 70n),
);

/** No secret shows in an error's message, its inspection, or its JSON. */
export function expectNoSecret(error: unknown) {
  expect(inspect(error, { depth: 6 })).not.toContain(SECRET);
  let json = "";
  try {
    json = JSON.stringify(error) ?? "";
  } catch {}
  expect(json).not.toContain(SECRET);
}

/** A validation error names each bad field by its path, followed by what was wrong. */
export function expectNamesField(error: { message: string; issues: { path: PropertyKey[] }[] }) {
  expect(error.issues.length).toBeGreaterThan(0);
  for (const issue of error.issues) {
    const path = formatZodPath(issue.path);
    // A union's issue may be explained by a deeper path starting with this one.
    const named = new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[.[:]`);
    expect(error.message).toMatch(named);
  }
}

/** A call to make later, shown in a counterexample as `name(args...)`. */
export type Call = () => unknown;
export function call<A extends unknown[]>(
  name: string,
  args: fc.Arbitrary<A>,
  run: (...a: A) => unknown,
): fc.Arbitrary<Call> {
  return args.map((a) =>
    Object.assign(() => run(...a), {
      [fc.toStringMethod]: () => `${name}(${a.map((x) => fc.stringify(x)).join(", ")})`,
    }),
  );
}
