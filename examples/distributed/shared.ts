// What every process of the example shares: Redis, the service and the model.
import { TrainableModel, TrainingClient } from "trajectory-recorder";

export const connection = {
  host: process.env.REDIS_HOST ?? "127.0.0.1",
  port: Number(process.env.REDIS_PORT ?? 6379),
};

/** The model every process trains or samples: registered once, found again by name. */
export function openModel(): Promise<TrainableModel> {
  // apiKey and baseURL fall back to WANDB_API_KEY and TRAINING_SERVICE_BASE_URL.
  return TrainableModel.register(new TrainingClient(), {
    project: "distributed-example",
    name: process.env.MODEL_NAME ?? "say-the-word",
    baseModel: process.env.BASE_MODEL ?? "emulator/toy-bigram",
  });
}

export const TARGETS = ["red", "cat", "apple", "two"];
