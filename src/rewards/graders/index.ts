// OpenAI graders (string_check, text_similarity, score_model, label_model, multi) as reward functions.
export { type GraderReward, type GraderRewardOptions, graderReward } from "./grader.js";
export {
  type GraderInputMessage,
  GraderInputMessageSchema,
  type GraderJson,
  GraderSchema,
  type LabelModelGraderJson,
  LabelModelGraderSchema,
  type MultiGraderJson,
  MultiGraderSchema,
  type PythonGraderJson,
  PythonGraderSchema,
  type ScoreModelGraderJson,
  ScoreModelGraderSchema,
  type StringCheckGraderJson,
  StringCheckGraderSchema,
  type TextSimilarityGraderJson,
  TextSimilarityGraderSchema,
} from "./schema.js";
export { type Sample, sampleOf } from "./template.js";
