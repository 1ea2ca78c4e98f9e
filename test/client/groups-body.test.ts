// The body of a request whose groups were prepared (written and checked
// once): the other fields as JSON.stringify writes them, then the groups'
// bytes as they are; the rest of the body still checked before a request.
import { TrainingClient } from "trajectory-recorder";
import { RequestValidationError } from "trajectory-recorder/errors";
import { expect, it } from "vitest";
import { groupsBody } from "../../src/client/core.js";
import { createPreparedJob } from "../../src/client/prepared.js";

const text = (body: ReturnType<typeof groupsBody>) =>
  Buffer.concat(body.parts.map((p) => Buffer.from(p))).toString("utf8");

it("writes the fields in their order, then the prepared groups as a list", () => {
  const g1 = Buffer.from('{"trajectories":[],"exceptions":[]}');
  const g2 = [Buffer.from('{"trajectories":'), Buffer.from("[]}")];
  const fields = { model_id: "m", experimental_config: { learning_rate: 1e-5 } };
  const body = groupsBody(fields, "trajectory_groups", [[g1], g2]);
  const expected = JSON.stringify({
    ...fields,
    trajectory_groups: [{ trajectories: [], exceptions: [] }, { trajectories: [] }],
  });
  expect(text(body)).toBe(expected);
  expect(body.byteLength).toBe(Buffer.byteLength(expected));
  expect(text(groupsBody({}, "trajectory_groups", []))).toBe('{"trajectory_groups":[]}');
  // A field of the same name is replaced by the list, never written twice.
  expect(text(groupsBody({ split: "val", trajectory_groups: 1 }, "trajectory_groups", []))).toBe(
    '{"split":"val","trajectory_groups":[]}',
  );
});

it("a prepared job is still checked: no group, or a bad field, is refused before any request", async () => {
  const client = new TrainingClient({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
  const id = "00000000-0000-4000-8000-000000000000";
  const empty = createPreparedJob(client.trainingJobs, { model_id: id }, []);
  await expect(empty).rejects.toBeInstanceOf(RequestValidationError);
  await expect(empty).rejects.toThrow(/trajectory_groups/);
  const bad = createPreparedJob(client.trainingJobs, { model_id: "not-a-uuid" }, [
    [Buffer.from("{}")],
  ]);
  await expect(bad).rejects.toThrow(/model_id/);
});
