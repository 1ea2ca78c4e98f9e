// Every request names the library and its version, so the service (and W&B)
// can tell this client's traffic apart.
import { readFileSync } from "node:fs";
import nock from "nock";
import { VERSION } from "trajectory-recorder/core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { USER_AGENT } from "../../src/client/index.js";
import { BASE, makeClient, useNock } from "./helpers.js";

useNock({ beforeAll, afterEach, afterAll });

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

it("sends User-Agent trajectory-recorder/<the package's version>", async () => {
  expect(VERSION).toBe(pkg.version);
  expect(USER_AGENT).toBe(`trajectory-recorder/${pkg.version}`);
  nock(BASE)
    .get("/v1/health")
    .matchHeader("user-agent", `trajectory-recorder/${pkg.version}`)
    .reply(200, { status: "ok" });
  await expect(makeClient().health()).resolves.toMatchObject({ status: "ok" });
});
