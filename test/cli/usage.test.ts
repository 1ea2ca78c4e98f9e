// The CLI's conventions, from a real process: help on stdout with exit 0 at
// every level, the version, usage mistakes on stderr with exit 2.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { cli, inProcess } from "./run.js";

const version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"))
  .version as string;

it("--help, --version and a usage mistake, each with its stream and exit code", async () => {
  const [help, ver, unknown] = await Promise.all([
    cli(["--help"]),
    cli(["--version"]),
    cli(["frobnicate"]),
  ]);
  expect(help).toMatchObject({ code: 0, stderr: "" });
  expect(help.stdout).toMatch(/^Usage: trajectory-recorder <command> \[options\]/);
  for (const name of ["models create", "checkpoints list", "jobs follow", "chat", "train", "sft"])
    expect(help.stdout).toContain(`  ${name} `);
  expect(help.stdout).toContain(
    "Exit codes: 0 ok, 1 failure, 2 wrong usage, 3 invalid data, 4 not found.",
  );
  expect(ver).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  expect(unknown.code).toBe(2);
  expect(unknown.stdout).toBe("");
  expect(unknown.stderr).toContain('unknown command "frobnicate"');
});

it("help at every level goes to stdout with exit 0", async () => {
  for (const args of [
    ["help"],
    ["models", "--help"],
    ["models", "create", "--help"],
    ["help", "jobs", "follow"],
    ["checkpoints", "delete", "-h"],
    ["emulator", "--help"],
    ["validate", "--help"],
  ]) {
    const r = await inProcess(args);
    expect(r.code, args.join(" ")).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^Usage: trajectory-recorder /);
  }
  const follow = await inProcess(["jobs", "follow", "--help"]);
  expect(follow.stdout).toContain("Usage: trajectory-recorder jobs follow JOB");
  expect(follow.stdout).toContain("--poll-interval MS");
  expect(follow.stdout).toContain("--api-key-file PATH");
});

it("help lists only the options a command takes", async () => {
  // Offline commands name no service option, and refuse one.
  for (const command of [["validate"], ["inspect"]]) {
    const help = (await inProcess([...command, "--help"])).stdout;
    expect(help, command.join(" ")).not.toContain("--base-url");
    expect(help, command.join(" ")).not.toContain("--api-key-file");
    expect(help, command.join(" ")).toContain("--json");
    const r = await inProcess([...command, "f.jsonl", "--base-url", "http://x/v1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option --base-url;");
  }
  // The emulator's --api-key-file is its own (accepted keys), said once.
  const emulator = (await inProcess(["emulator", "--help"])).stdout;
  expect(emulator.match(/^ {2}--api-key-file/gm)).toHaveLength(1);
  expect(emulator).toContain("accepted keys, one per line");
  expect(emulator).not.toContain("--base-url");
  // Only delete commands take --yes.
  expect((await inProcess(["models", "delete", "--help"])).stdout).toContain("--yes");
  expect((await inProcess(["models", "get", "--help"])).stdout).not.toContain("--yes");
});

it("usage mistakes name what is wrong, show the usage, and exit 2", async () => {
  const cases: [string[], string][] = [
    [["models"], "Usage: trajectory-recorder models <create|list|get|delete>"],
    [["models", "rename"], 'unknown subcommand "rename"'],
    [["models", "create", "--project", "p"], "--name is required."],
    [["models", "delete"], "missing MODEL."],
    [["chat"], "missing MODEL MESSAGE..."],
    [["chat"], "Usage: trajectory-recorder chat MODEL MESSAGE... [--step N]"],
    [["chat", "me/p/n"], "missing arguments: expected MODEL MESSAGE..., got only me/p/n."],
    [["validate", "a", "b"], "too many arguments: expected FILE, got a b."],
    [["models", "list", "x"], "takes no arguments; got x."],
    [["checkpoints", "list", "m", "--order", "up"], '--order must be asc or desc; got "up".'],
    [["checkpoints", "list", "m", "--colour"], "unknown option --colour;"],
    [["chat", "me/p/n", "hi", "--step=-1"], '--step must be an integer of at least 0; got "-1".'],
    [["chat", "just-a-name", "hi", "--api-key-file", "/dev/null"], "is empty"],
    [
      ["models", "list", "--base-url", "http://u:pw@localhost:1/v1"],
      "holds a user name or password",
    ],
    [["emulator", "--upstream", "notaurl"], "--upstream must be the http:// or https:// base URL"],
    [["emulator", "--port", "70000"], "--port must be at most 65535"],
    [["sft", "--model", "m"], "give one of FILE, --from-store DIR or --data-url URL."],
  ];
  for (const [args, message] of cases) {
    const r = await inProcess(args);
    expect(r.code, args.join(" ")).toBe(2);
    expect(r.stdout, args.join(" ")).toBe("");
    expect(r.stderr, args.join(" ")).toContain(message);
  }
});

it("exit codes: the one table in docs/cli.md is the one the CLI uses, each code from a real run", async () => {
  const { EXIT } = await import("../../src/cli/context.js");
  const doc = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("| Code |"));
  const rows = [...section.matchAll(/^\| (\d)\s*\| (\w+)\s*\|/gm)].map((m) => [Number(m[1]), m[2]]);
  expect(rows).toEqual([
    [EXIT.ok, "ok"],
    [EXIT.failure, "failure"],
    [EXIT.usage, "usage"],
    [EXIT.invalidData, "invalid_data"],
    [EXIT.notFound, "not_found"],
  ]);
  const dir = mkdtempSync(path.join(tmpdir(), "tr-cli-exit-"));
  const bad = path.join(dir, "bad.jsonl");
  writeFileSync(bad, "{not json\n");
  const none = path.join(dir, "nothing.jsonl");
  writeFileSync(none, "");
  const key = path.join(dir, "key");
  writeFileSync(key, "k\n");
  process.env.TRAJECTORY_RECORDER_STATE_DIR = dir;
  try {
    const runs: [string[], number, string][] = [
      [["inspect", none], 0, ""],
      [
        [
          "jobs",
          "get",
          "00000000-0000-4000-8000-000000000000",
          "--base-url",
          "http://127.0.0.1:1/v1",
          "--api-key-file",
          key,
        ],
        1,
        "failure",
      ],
      [["validate"], 2, "usage"],
      [["validate", bad], 3, "invalid_data"],
      [["train", bad, "--model", "me/p/n", "--api-key-file", key], 3, "invalid_data"],
      [["models", "get", "me/p/n", "--api-key-file", key], 4, "not_found"],
    ];
    for (const [args, code, type] of runs) {
      const r = await inProcess([...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(code);
      if (code !== 0 && args[0] !== "validate")
        expect(JSON.parse(r.stdout).error, args.join(" ")).toMatchObject({ type, exit_code: code });
    }
  } finally {
    delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
  }
});
