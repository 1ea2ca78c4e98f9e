/**
 * The zod schema of every request and response of the Training Service, and of the ART trajectory
 * JSON, in the wire's snake_case: for code that validates or builds that JSON itself.
 *
 * @packageDocumentation
 * @module trajectory-recorder/wire
 */
// Wire schemas: every shape as it travels, in snake_case, shared by the client
// and the emulator. This folder is a leaf: it imports nothing of ours.
export * from "./api.js";
export * from "./chat.js";
export * from "./trajectory.js";
