/**
 * The run report: one self-contained HTML page of a run (its steps, groups, trajectories and
 * training), written from the groups a program keeps.
 *
 * @packageDocumentation
 * @module trajectory-recorder/report
 */
// The `trajectory-recorder/report` entry point: what a program writes a report
// with. A file of its own, so the folder's other exports (the CLI's loaders)
// stay internal.
export {
  type ReportFeedback,
  type ReportGroup,
  type ReportPageOptions,
  type ReportProductionTrajectory,
  type ReportRun,
  type ReportSource,
  ReportSourceError,
  type ReportSourceProblem,
  type ReportStep,
  type ReportTraining,
  type ReportTrajectory,
  renderReport,
  type StepStats,
  type WriteReportOptions,
  type WrittenReport,
  writeReport,
} from "./index.js";
