// ART's compact_dump() payload ({"format": "art.trajectories", ...}, a string
// table) reads as the group or trajectory it holds, as ART's
// `compact_validate` reads it; anything else with a `format` is refused by
// name, never read as an empty group.
import { readFile } from "node:fs/promises";
import { Trajectory, TrajectoryGroup, TrajectoryValidationError } from "trajectory-recorder";
import { decodeArtPayload } from "trajectory-recorder/wire";
import { expect, it } from "vitest";

const fixture = (name: string) =>
  readFile(new URL(`../fixtures/art/${name}`, import.meta.url), "utf8");

it("reads a compact trajectory_group payload as the group its plain dump is", async () => {
  const compact = await fixture("group-art-trajectories.json");
  expect(JSON.parse(compact).strings.$0).toBe("messages_and_choices");
  const plain = TrajectoryGroup.fromJSON(await fixture("group-with-exception.json"));
  const fromCompact = TrajectoryGroup.fromJSON(compact);
  expect(fromCompact.trajectories.length).toBeGreaterThan(0);
  expect(fromCompact.toJSON()).toEqual(plain.toJSON());
  // As an object too.
  expect(TrajectoryGroup.fromJSON(JSON.parse(compact)).toJSON()).toEqual(plain.toJSON());
});

it("decodes one level deep, keys and values, leaving unknown $N references as written", () => {
  const payload = {
    format: "art.trajectories",
    version: 1,
    kind: "trajectory",
    strings: { $0: "content", $1: "$0" },
    data: {
      messages_and_choices: [
        { role: "user", $0: "$1" },
        { role: "assistant", $0: "$7" },
      ],
      reward: 1,
    },
  };
  const t = Trajectory.fromJSON(payload);
  expect(t.messages()).toEqual([
    { role: "user", content: "$0" },
    { role: "assistant", content: "$7" },
  ]);
  expect(decodeArtPayload(payload).kind).toBe("trajectory");
});

it("refuses other formats, versions, kinds and malformed tables, naming them", () => {
  const base = {
    format: "art.trajectories",
    version: 1,
    kind: "trajectory_group",
    strings: {},
    data: {},
  };
  const cases: [unknown, RegExp][] = [
    [{ ...base, format: "other.format" }, /format "other.format" is not one this library reads/],
    [{ ...base, version: 2 }, /"art.trajectories" version 2 is not supported/],
    [
      { ...base, kind: "trajectory_groups", data: [] },
      /kind "trajectory_groups", not trajectory_group; read a list with decodeArtPayload/,
    ],
    [
      { ...base, kind: "tokenized_trajectory_group" },
      /kind "tokenized_trajectory_group", not trajectory_group/,
    ],
    [{ ...base, strings: { x: "y" } }, /strings: "x" is not a \$N reference/],
    [{ ...base, strings: { $0: 5 } }, /strings\.\$0: expected a string/],
    [{ ...base, extra: 1 }, /holds exactly format, version, kind, strings and data/],
    [{ ...base, strings: { $0: "a" }, data: { a: 1, $0: 2 } }, /gives the key "a" twice/],
  ];
  for (const [json, message] of cases) {
    const error = (() => {
      try {
        TrajectoryGroup.fromJSON(json);
      } catch (e) {
        return e;
      }
    })();
    expect(error, JSON.stringify(json)).toBeInstanceOf(TrajectoryValidationError);
    expect((error as Error).message).toMatch(message);
  }
  // A list payload reads item by item through decodeArtPayload.
  const list = decodeArtPayload({
    ...base,
    kind: "trajectory_groups",
    data: [{ trajectories: [] }],
  });
  expect((list.data as unknown[]).map((g) => TrajectoryGroup.fromJSON(g).trajectories)).toEqual([
    [],
  ]);
});
