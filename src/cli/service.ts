// What a command that talks to the service starts from: the client, the
// models and jobs known for its URL, and the confirmation of destructive steps.
import type { TrainingClient } from "../client/index.js";
import { NotFoundError } from "../client/index.js";
import type { Values } from "./args.js";
import { makeClient, NotFoundCliError, type Output, serviceUrl, UsageError } from "./context.js";
import { Known, type KnownModel } from "./known.js";

export interface Service {
  client: TrainingClient;
  known: Known;
}

export async function connect(values: Values, out: Output): Promise<Service> {
  const client = makeClient(values);
  const warn = (message: string) => out.stderr.write(`warning: ${message}\n`);
  return { client, known: await Known.load(serviceUrl(values), warn) };
}

/**
 * A model's id as the service knows it, after checking it exists (its
 * checkpoints are listed: the service has no "get model"); a model the service
 * does not know is forgotten and reported (exit 4).
 */
export async function existingModel(
  s: Service,
  ref: string,
): Promise<{ model: KnownModel | { id: string }; latestStep: number | null }> {
  const model = s.known.model(ref);
  try {
    const page = await s.client.models.checkpoints.list(model.id, { limit: 1, order: "desc" });
    return { model, latestStep: page.data[0]?.step ?? null };
  } catch (error) {
    if (error instanceof NotFoundError) {
      s.known.forgetModel(model.id);
      await s.known.save();
      throw new NotFoundCliError(`model ${model.id} does not exist on ${s.known.url}.`);
    }
    throw error;
  }
}

/**
 * Asks before a destructive step: `--yes` confirms; on a terminal, a prompt;
 * otherwise refused (exit 2), since nobody can answer.
 */
export async function confirm(values: Values, out: Output, question: string): Promise<boolean> {
  if (values.yes === true) return true;
  if (out.stdin?.isTTY !== true || out.ask === undefined) {
    throw new UsageError(
      "this deletes data and stdin is not a terminal to confirm on; pass --yes to confirm.",
    );
  }
  const answer = await out.ask(`${question} [y/N] `);
  return /^\s*y(es)?\s*$/i.test(answer);
}

export const YES_OPTION = { yes: { type: "boolean", short: "y" } } as const;
export const YES_HELP =
  "  -y, --yes             delete without asking (required when stdin is not a terminal)";
