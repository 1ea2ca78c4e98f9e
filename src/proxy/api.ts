// The standalone proxy's HTTP API: every request and answer body as a zod
// schema (snake_case, as it travels), defined once; the types follow from them.
import { z } from "zod";

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const metrics = z.record(z.string(), z.union([z.number(), z.boolean()]));
const metadata = z.record(z.string(), z.unknown());

/** `POST /rollouts`: opens a rollout. */
export const OpenRolloutRequest = z
  .object({
    /** The trajectory's metadata from the start (the scenario, an id). */
    metadata: metadata.optional(),
  })
  .strict();

/** `PATCH /rollouts/{id}` and the body of `POST /rollouts/{id}/finish`. */
export const UpdateRolloutRequest = z
  .object({
    reward: z.number().finite().optional(),
    /** Merged into the trajectory's metrics (numbers and booleans, as ART). */
    metrics: metrics.optional(),
    /** Merged into the trajectory's metadata. */
    metadata: metadata.optional(),
    /** Appended to the trajectory's logs. */
    logs: z.array(z.string()).optional(),
  })
  .strict();

/** `POST /groups`: puts finished rollouts in a group. */
export const CreateGroupRequest = z
  .object({
    rollouts: z.array(z.string().min(1)).min(1),
    metadata: z.record(z.string(), scalar).optional(),
  })
  .strict();

/** `POST /train`: trains the upstream model on groups (RL). */
export const TrainRequest = z
  .object({
    groups: z.array(z.string().min(1)).min(1),
    learning_rate: z.number().positive().finite().optional(),
  })
  .strict();

/** A rollout as the API describes it. */
export const RolloutInfo = z.object({
  id: z.string(),
  status: z.enum(["open", "finished"]),
  /** The OpenAI base URL for the agent, ending in `/v1`. */
  base_url: z.string(),
  /** The same endpoint for an Anthropic SDK (`ANTHROPIC_BASE_URL`): the root URL, without `/v1`. */
  anthropic_base_url: z.string(),
  /** The agent's key for `base_url` (only in the answer to `POST /rollouts`). */
  api_key: z.string().optional(),
  group: z.string().nullable(),
  reward: z.number(),
  metrics: metrics,
  metadata: metadata,
});

/** The body of `POST /rollouts`. */
export type OpenRolloutRequest = z.infer<typeof OpenRolloutRequest>;
/** The body of `PATCH /rollouts/{id}` and `POST /rollouts/{id}/finish`. */
export type UpdateRolloutRequest = z.infer<typeof UpdateRolloutRequest>;
/** The body of `POST /groups`. */
export type CreateGroupRequest = z.infer<typeof CreateGroupRequest>;
/** The body of `POST /train`. */
export type TrainRequest = z.infer<typeof TrainRequest>;
/** A rollout as the API answers it. */
export type RolloutInfo = z.infer<typeof RolloutInfo>;

/** A bad request: the fields (dotted paths) and what was wrong with each. */
export interface ApiIssue {
  path: string;
  message: string;
}

/** Parses `body` with `schema`, or returns the issues, each with its field path. */
export function check<T>(
  schema: z.ZodType<T>,
  body: unknown,
): { data: T } | { issues: ApiIssue[] } {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return { data: parsed.data };
  return {
    issues: parsed.error.issues.map((i) => ({
      path: ["body", ...i.path.map(String)].join("."),
      message: i.message,
    })),
  };
}
