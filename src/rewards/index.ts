// Reward functions: per trajectory, relative within a group, and a model judge.
export {
  applyGroupReward,
  applyReward,
  type GroupReward,
  InvalidRewardError,
  type TrajectoryReward,
} from "./apply.js";
export {
  type GraderJson,
  type GraderReward,
  type GraderRewardOptions,
  GraderSchema,
  graderReward,
  type MultiGraderJson,
  type Sample,
  sampleOf,
} from "./graders/index.js";
export {
  applyJudge,
  type JudgeClient,
  type JudgeErrorPolicy,
  type JudgeOptions,
  JudgeResponseError,
  type JudgeScore,
  judgeGroup,
} from "./judge.js";
export { DEFAULT_JUDGE_RUBRIC } from "./judge-prompt.js";
export { minMaxRewards, rankRewards, zScores } from "./relative.js";
