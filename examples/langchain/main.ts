// A LangGraph agent with a tool, recorded as a trajectory through the
// LangChain callback handler; prints the trajectory's JSON.
//
//   npx tsx examples/langchain/main.ts                      # against the emulator, started in-process
//   OPENAI_BASE_URL=http://localhost:8000/v1 OPENAI_API_KEY=... MODEL=my-model \
//     npx tsx examples/langchain/main.ts                    # any OpenAI-compatible server
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { Recorder } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { chatOpenAIFields, TrajectoryCallbackHandler } from "trajectory-recorder/langchain";
import { z } from "zod";

const paint = tool(async ({ color }) => `The wall is now ${color}.`, {
  name: "paint",
  description: "Paint the wall in a colour.",
  schema: z.object({ color: z.string() }),
});

const external = process.env.OPENAI_BASE_URL;
const emulator = external ? undefined : await startEmulator({ port: 0, apiKeys: ["demo-key"] });
try {
  // Token ids need a vLLM-style server (the emulator, the Training Service).
  const model = new ChatOpenAI(
    chatOpenAIFields(
      {
        model: process.env.MODEL ?? "emulator/tiny",
        apiKey: emulator ? "demo-key" : process.env.OPENAI_API_KEY,
        configuration: { baseURL: emulator?.url ?? external },
        maxTokens: 12,
      },
      { tokenIds: !external },
    ),
  );

  // The model must use the tool on its first turn, then answer.
  const agent = async (state: typeof MessagesAnnotation.State) => {
    const turn = state.messages.filter((m) => m.getType() === "ai").length;
    const bound = model.bindTools([paint], { tool_choice: turn === 0 ? "required" : "none" });
    return { messages: [await bound.invoke(state.messages)] };
  };
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode([paint]))
    .addEdge(START, "agent")
    .addConditionalEdges(
      "agent",
      (s) => ((s.messages.at(-1) as any).tool_calls?.length ? "tools" : END),
      ["tools", END],
    )
    .addEdge("tools", "agent")
    .compile();

  const recorder = new Recorder({ tokenIds: !external });
  const handler = new TrajectoryCallbackHandler();
  const trajectory = await recorder.rollout(async (t) => {
    const out = await graph.invoke(
      { messages: [new HumanMessage("paint the wall red")] },
      { callbacks: [handler] },
    );
    const answer = String(out.messages.at(-1)?.content ?? "");
    t.reward = answer.includes("red") ? 1 : 0;
  });
  console.log(JSON.stringify(trajectory, null, 2));
} finally {
  await emulator?.close();
}
