import nock from "nock";
import { TrainingClient, type TrainingClientOptions } from "trajectory-recorder";

export const BASE = "http://training.test";
export const KEY = "sk-test-secret-key-0123456789";

/** A client aimed at the nock host, with fast retries unless told otherwise. */
export function makeClient(options: TrainingClientOptions = {}): TrainingClient {
  return new TrainingClient({ apiKey: KEY, baseURL: `${BASE}/v1`, maxRetries: 0, ...options });
}

/** Starts nock for one test file: no real network, and a clean slate per test. */
export function useNock(hooks: {
  beforeAll: (fn: () => void) => void;
  afterEach: (fn: () => void) => void;
  afterAll: (fn: () => void) => void;
}): void {
  hooks.beforeAll(() => {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
  });
  hooks.afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    if (pending.length > 0) throw new Error(`nock mocks not used: ${pending.join(", ")}`);
  });
  hooks.afterAll(() => {
    nock.enableNetConnect();
    nock.restore();
  });
}
