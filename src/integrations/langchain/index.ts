/**
 * Records LangChain.js and LangGraph.js agents as trajectories.
 *
 * @packageDocumentation
 * @module trajectory-recorder/langchain
 */
// trajectory-recorder/langchain: record LangChain.js and LangGraph.js agents.
export { type ChatOpenAIFieldsOptions, chatOpenAIFields, type RecordingFields } from "./fields.js";
export { TrajectoryCallbackHandler } from "./handler.js";
export { toOpenAIMessages } from "./messages.js";
