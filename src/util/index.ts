// Small helpers every folder may use (a leaf: it imports nothing of ours).
// Internal: nothing here is part of the package's public API, except
// InvalidArgumentError, which the root and `trajectory-recorder/core` export.
export { InvalidArgumentError, isObjectLike, kindOf } from "./argument-error.js";
export { atomicWriteFile, isTempName, tempSibling } from "./atomic-write.js";
export { keepClassName } from "./class-name.js";
export { copyJson } from "./copy-json.js";
export { errorMessage } from "./error-message.js";
export { findJsonProblem, type JsonProblem, MAX_JSON_DEPTH } from "./json-check.js";
export { readBodyCapped } from "./read-capped.js";
