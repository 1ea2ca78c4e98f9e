// Wire schemas: every shape as it travels, in snake_case, shared by the client
// and the emulator. This folder is a leaf: it imports nothing of ours.
export * from "./api-models.js";
export * from "./api-service.js";
export * from "./api-training.js";
export * from "./chat.js";
export * from "./choice.js";
export * from "./messages.js";
// Internal: the compile-time check that a hand-written type equals its
// schema's. `trajectory-recorder/wire` (entry.ts) leaves it out.
export { type Flat, sameType } from "./same-type.js";
export * from "./trajectory.js";
