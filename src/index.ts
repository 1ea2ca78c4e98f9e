// The root entry point only re-exports; each folder has one way in.
export * from "./client/index.js";
export * from "./recorder/index.js";
export {
  type ReportGroup,
  type ReportRun,
  type ReportStep,
  type ReportTraining,
  type ReportTrajectory,
  renderReport,
  type WriteReportOptions,
  type WrittenReport,
  writeReport,
} from "./report/index.js";
export * from "./rewards/index.js";
export * from "./shipper/index.js";
export * from "./telemetry/index.js";
export * from "./training/index.js";
export * from "./trajectory/index.js";
export * from "./wire/index.js";
