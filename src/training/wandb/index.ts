// The W&B transport: artifact uploads (the GraphQL API, file storage) and the
// default SFT uploader built on them. The training folder reaches it here.
export {
  manifestDigest,
  WandbArtifactUploader,
  type WandbArtifactUploaderOptions,
} from "./artifacts.js";
export { defaultSftUploader } from "./default.js";
export { DEFAULT_WANDB_BASE_URL, WandbApiError } from "./graphql.js";
export {
  DEFAULT_WANDB_MAX_ANSWER_BYTES,
  DEFAULT_WANDB_TIMEOUTS,
  type WandbTimeouts,
} from "./http.js";
