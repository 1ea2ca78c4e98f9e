// Which uploader `trainSft` uses when it is given none.
import type { TrainingClient } from "../../client/index.js";
import { InvalidArgumentError } from "../../util/argument-error.js";
import { isLoopbackHostname } from "../../util/loopback.js";
import { WandbArtifactUploader } from "./artifacts.js";
import { DEFAULT_WANDB_BASE_URL } from "./graphql.js";

/**
 * The uploader `trainSft` uses when none is given: a
 * {@link WandbArtifactUploader}, as ART uploads SFT data, with the training
 * client's API key (the service and W&B share keys; ART passes its client's
 * key to `wandb` too). Its base URL is `WANDB_BASE_URL` when set; otherwise,
 * for a client on loopback (the emulator, which serves W&B's artifact API on
 * the same port) the client's origin; otherwise `https://api.wandb.ai`.
 *
 * @example
 * const uploader = defaultSftUploader(client); // what trainSft(data) uses
 */
export function defaultSftUploader(client: TrainingClient): WandbArtifactUploader {
  if (typeof (client as { createOpenAI?: unknown } | null)?.createOpenAI !== "function")
    throw new InvalidArgumentError(
      "defaultSftUploader(client)",
      "client",
      "a TrainingClient",
      client,
    );
  return new WandbArtifactUploader({
    // The key is private to the client; the openai client it builds exposes it.
    apiKey: client.createOpenAI().apiKey ?? undefined,
    baseUrl: process.env.WANDB_BASE_URL || wandbBaseUrlFor(client.baseURL),
  });
}

function wandbBaseUrlFor(serviceBaseURL: string): string {
  const url = new URL(serviceBaseURL);
  return isLoopbackHostname(url.hostname) ? url.origin : DEFAULT_WANDB_BASE_URL;
}
