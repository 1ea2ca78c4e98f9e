// Migration from other fine-tuning services: OpenAI's fine-tuning files.
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
