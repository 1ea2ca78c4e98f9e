/**
 * A way off OpenAI fine-tuning: its chat, preference (DPO) and reinforcement
 * fine-tuning files read as SFT rows and evaluation scenarios, its graders as
 * reward functions, and an RFT job run on the Training Service
 * (`runRft`). See docs/openai-migration.md.
 *
 * @packageDocumentation
 * @module trajectory-recorder/openai-ft
 */
// The `trajectory-recorder/openai-ft` entry point. A subpath of its own: the
// root's API stays as it is, and a program that never migrates from OpenAI
// never loads the graders' metrics or the importer.

export {
  type GraderInputMessage,
  GraderInputMessageSchema,
  type GraderJson,
  type GraderReward,
  type GraderRewardOptions,
  GraderSchema,
  graderReward,
  type LabelModelGraderJson,
  LabelModelGraderSchema,
  type MultiGraderJson,
  MultiGraderSchema,
  type PythonGraderJson,
  PythonGraderSchema,
  type Sample,
  type ScoreModelGraderJson,
  ScoreModelGraderSchema,
  type StringCheckGraderJson,
  StringCheckGraderSchema,
  sampleOf,
  type TextSimilarityGraderJson,
  TextSimilarityGraderSchema,
} from "../rewards/graders/index.js";
export type { Converted, ConvertOptions, LineStatus, SftRow } from "./convert.js";
export { convertLine } from "./convert.js";
export {
  type ImportedLine,
  type ImportOptions,
  type ImportSummary,
  importOpenAiFt,
  readOpenAiFt,
} from "./import-openai-ft.js";
export {
  type OpenAiChatLine,
  OpenAiChatLineSchema,
  type OpenAiPreferenceLine,
  OpenAiPreferenceLineSchema,
} from "./openai-ft-schema.js";
export { type RftResult, type RftStep, runRft } from "./rft.js";
export type { RftOptions } from "./rft-options.js";
export {
  answerScenario,
  type OpenAiScenario,
  REFERENCE_GRADER,
  readOpenAiScenarios,
  type ScenarioRolloutOptions,
  scenarioRollout,
} from "./scenarios.js";
