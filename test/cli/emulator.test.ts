// `trajectory-recorder emulator` as a process: keys from the environment or a
// file (never printed), and a warning when it listens beyond loopback without any.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { collect, start, waitForOutput } from "./run.js";

const running: ReturnType<typeof start>[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGTERM");
});

async function status(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/preview/models`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ project: "p", name: `n${Math.random()}`, base_model: "b" }),
  });
  return res.status;
}

it("takes keys from EMULATOR_API_KEYS and --api-key-file, and prints none of them", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-emu-"));
  const keyFile = path.join(dir, "keys");
  await writeFile(keyFile, "# one per line\nfile-key-0123456789 alice\n");
  const child = start(["emulator", "--port", "0", "--api-key-file", keyFile], {
    EMULATOR_API_KEYS: "env-key-0123456789,env-key-two-01234",
  });
  running.push(child);
  const done = collect(child);
  const shown = await waitForOutput(child, /export TRAINING_SERVICE_BASE_URL=(\S+)/);
  const url = /export TRAINING_SERVICE_BASE_URL=(\S+)/.exec(shown)?.[1] as string;
  expect(shown).toContain(
    `Accepted API keys: those from EMULATOR_API_KEYS, --api-key-file ${keyFile}.`,
  );
  expect(await status(url, "env-key-0123456789")).toBe(200);
  expect(await status(url, "env-key-two-01234")).toBe(200);
  expect(await status(url, "file-key-0123456789")).toBe(200);
  expect(await status(url, "some-other-key")).toBe(401);
  child.kill("SIGTERM");
  const out = await done;
  expect(out.code).toBe(0);
  for (const key of ["env-key-0123456789", "env-key-two-01234", "file-key-0123456789"])
    expect(out.stdout + out.stderr).not.toContain(key);
});

it("warns on stderr when it listens beyond loopback and takes any key", async () => {
  const open = start(["emulator", "--port", "0", "--host", "0.0.0.0"]);
  running.push(open);
  const openDone = collect(open);
  await waitForOutput(open, /listening on/);
  open.kill("SIGTERM");
  const openOut = await openDone;
  expect(openOut.stderr).toMatch(
    /^warning: The emulator listens on 0\.0\.0\.0, which other machines can reach, and accepts any API key/m,
  );

  const keyed = start(["emulator", "--port", "0", "--host", "0.0.0.0"], {
    EMULATOR_API_KEYS: "k-0123456789",
  });
  running.push(keyed);
  const keyedDone = collect(keyed);
  await waitForOutput(keyed, /listening on/);
  keyed.kill("SIGTERM");
  expect((await keyedDone).stderr).toBe("");
});
