// Wire schemas: every shape as it travels, in snake_case, shared by the client
// and the emulator. This folder is a leaf: it imports nothing of ours.
export * from "./api.js";
export * from "./chat.js";
export * from "./trajectory.js";
