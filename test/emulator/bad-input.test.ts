import { InvalidArgumentError } from "trajectory-recorder";
import { isLoopbackHost, parseApiKeys, startEmulator } from "trajectory-recorder/emulator";
import { expect, it } from "vitest";

it("startEmulator rejects options of the wrong type naming the option, before anything listens", async () => {
  let promise: Promise<unknown> | undefined;
  expect(() => {
    promise = startEmulator(null as never);
  }).not.toThrow();
  await expect(promise).rejects.toThrow(
    "startEmulator(options): options: expected an object, received null.",
  );
  await expect(startEmulator({ port: "80" as never })).rejects.toThrow(InvalidArgumentError);
  await expect(startEmulator({ port: "80" as never })).rejects.toThrow(
    "startEmulator(options): options.port: expected number, received string.",
  );
  await expect(startEmulator({ apiKeys: [1] as never })).rejects.toThrow(/options\.apiKeys/);
  await expect(startEmulator({ fetchTrainingData: { timeoutMs: -1 } })).rejects.toThrow(
    /options\.fetchTrainingData\.timeoutMs: /,
  );
  await expect(startEmulator({ onWarning: "log" as never })).rejects.toThrow(
    "startEmulator(options): options.onWarning: expected a function.",
  );
});

it("isLoopbackHost and parseApiKeys name an argument that is not a string", () => {
  expect(() => isLoopbackHost(undefined as never)).toThrow(
    "isLoopbackHost(host): host: expected a host name or address, received undefined.",
  );
  expect(() => parseApiKeys(null as never)).toThrow(
    "parseApiKeys(text, source): text: expected a string, received null.",
  );
  expect(isLoopbackHost("127.0.0.1")).toBe(true);
});
