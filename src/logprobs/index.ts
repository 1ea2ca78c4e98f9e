// Recorded logprobs: the compact columns (CompactLogprobs), their three
// producers (a scan of the answer's text, a copy of the SDK's objects, and
// compaction of either), the check before training, and the rules all of
// them share (rules.ts). Other folders import from here only.

export { TokenCapture } from "./capture.js";
export type { Columns, TokenLogprob } from "./columns.js";
export { CompactLogprobs, compactChoice, compactItems } from "./compact.js";
export { MAX_REFERENCED_TOKENS, MAX_WAITING_TOKENS } from "./held.js";
export {
  ALTERNATIVE_KEYS,
  BYTES_EXPECTED,
  isByte,
  isByteList,
  isLogprob,
  isTokenBytes,
  isTokenText,
  LOGPROB_EXPECTED,
  LOGPROBS_KEYS,
  MAX_BYTE,
  TOKEN_KEYS,
  TOKEN_TEXT_EXPECTED,
} from "./rules.js";
export { type ScannedAnswer, scanAnswer } from "./scan.js";
export { isUtf8Of } from "./utf8.js";
export { logprobProblems } from "./validate.js";
