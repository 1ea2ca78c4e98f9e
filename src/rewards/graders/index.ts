// OpenAI graders (string_check, text_similarity, score_model, label_model, multi) as reward functions.
export { type GraderReward, type GraderRewardOptions, graderReward } from "./grader.js";
export type { GraderJson, MultiGraderJson } from "./schema.js";
export { GraderSchema } from "./schema.js";
export { type Sample, sampleOf } from "./template.js";
