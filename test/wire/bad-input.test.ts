import { InvalidArgumentError } from "trajectory-recorder";
import { formatZodPath, zodIssuesToValidationItems } from "trajectory-recorder/wire";
import { expect, it } from "vitest";
import { z } from "zod";

it("formatZodPath and zodIssuesToValidationItems name what is not a path or a zod error", () => {
  expect(() => formatZodPath(null as never)).toThrow(InvalidArgumentError);
  expect(() => formatZodPath(null as never)).toThrow(
    "formatZodPath(path): path: expected an array of keys (strings, numbers), received null.",
  );
  // An array key would be stringified, without bound for a deep one.
  let deep: unknown[] = [];
  for (let i = 0; i < 10_000; i++) deep = [deep];
  expect(() => formatZodPath(["a", deep] as never)).toThrow(
    "formatZodPath(path): path[1]: expected a string, number or symbol key, received an array.",
  );
  expect(() => zodIssuesToValidationItems(undefined as never, "body")).toThrow(
    "zodIssuesToValidationItems(error, location): error: expected a ZodError (an object with issues), received undefined.",
  );
  const error = z.object({ a: z.string() }).safeParse({ a: 1 }).error!;
  expect(() => zodIssuesToValidationItems(error, "header" as never)).toThrow(
    /location: expected "body", "query" or "path", received a string/,
  );
  expect(() => zodIssuesToValidationItems({ issues: [{ message: "m" }] } as never, "body")).toThrow(
    /error\.issues\[0\]\.path: expected an array of keys/,
  );
  expect(zodIssuesToValidationItems(error, "body")[0]?.loc).toEqual(["body", "a"]);
});
