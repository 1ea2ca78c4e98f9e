// Telemetry is a leaf every folder may use. It depends on @opentelemetry/api
// only, which does nothing until the user registers an SDK.
export * from "./training.js";
