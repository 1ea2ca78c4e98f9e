// The shapes of real Messages transcripts, as Anthropic's docs and SDK test
// fixtures show them (tool use with parallel calls, extended thinking with
// tools and a redacted block, server-side web search with citations, a
// vision request with cached system blocks), written here in our own words
// and values. `toolUseIds` lists every tool_use / server_tool_use id;
// `openCalls` those the response makes (their results would come next turn).

type Any = Record<string, unknown>;

export interface Transcript {
  name: string;
  request: { system?: unknown; messages: Any[]; tools?: Any[] };
  response: { content: Any[]; stop_reason: string };
  toolUseIds: string[];
  openCalls: string[];
  dropped: string[];
}

const weatherTool = {
  name: "get_weather",
  description: "Current weather of a city",
  input_schema: {
    type: "object",
    properties: { location: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] } },
    required: ["location"],
  },
};
const timeTool = {
  name: "get_time",
  description: "Local time of a time zone",
  input_schema: { type: "object", properties: { timezone: { type: "string" } } },
};

export const transcripts: Transcript[] = [
  {
    name: "parallel tool use, then a final answer",
    request: {
      tools: [weatherTool, timeTool],
      messages: [
        { role: "user", content: "What's the weather and the time in Lisbon?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "I'll check both at once." },
            {
              type: "tool_use",
              id: "toolu_01A",
              name: "get_weather",
              input: { location: "Lisbon" },
            },
            {
              type: "tool_use",
              id: "toolu_01B",
              name: "get_time",
              input: { timezone: "Europe/Lisbon" },
            },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_01A", content: "19°C, clear" },
            {
              type: "tool_result",
              tool_use_id: "toolu_01B",
              content: [{ type: "text", text: "14:05" }],
            },
          ],
        },
      ],
    },
    response: {
      content: [{ type: "text", text: "It's 19°C and clear in Lisbon, and 14:05 there." }],
      stop_reason: "end_turn",
    },
    toolUseIds: ["toolu_01A", "toolu_01B"],
    openCalls: [],
    dropped: [],
  },
  {
    name: "extended thinking interleaved with tool use",
    request: {
      system: "You are a careful assistant.",
      tools: [weatherTool],
      messages: [
        { role: "user", content: "Should I pack an umbrella for Bergen?" },
        {
          role: "assistant",
          content: [
            {
              type: "thinking",
              thinking: "Bergen is rainy; check today's forecast.",
              signature: "EqQBCgIYAhIM1",
            },
            { type: "redacted_thinking", data: "EmwKAhgBEgy3va" },
            {
              type: "tool_use",
              id: "toolu_02",
              name: "get_weather",
              input: { location: "Bergen", unit: "celsius" },
            },
          ],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_02", content: "Rain, 9°C" }],
        },
      ],
    },
    response: {
      content: [
        { type: "thinking", thinking: "Rain is forecast, so yes.", signature: "EqQBCgIYAhIM2" },
        { type: "text", text: "Yes: rain and 9°C are forecast." },
      ],
      stop_reason: "end_turn",
    },
    toolUseIds: ["toolu_02"],
    openCalls: [],
    dropped: ["redacted_thinking"],
  },
  {
    name: "server-side web search with cited text, then a client tool call",
    request: {
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }, timeTool],
      messages: [{ role: "user", content: "When does the next Artemis launch, in Tokyo time?" }],
    },
    response: {
      content: [
        { type: "text", text: "I'll search for the date." },
        {
          type: "server_tool_use",
          id: "srvtoolu_03",
          name: "web_search",
          input: { query: "next Artemis launch date" },
        },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_03",
          content: [
            {
              type: "web_search_result",
              url: "https://space.example/artemis",
              title: "Artemis schedule",
              encrypted_content: "Eo8BCioIAhgBIiQ",
              page_age: "2 days ago",
            },
          ],
        },
        {
          type: "text",
          text: "The launch is set for 5 May, 10:00 UTC",
          citations: [
            {
              type: "web_search_result_location",
              url: "https://space.example/artemis",
              title: "Artemis schedule",
              encrypted_index: "Eo8BCio",
              cited_text: "Launch window opens 5 May at 10:00 UTC",
            },
          ],
        },
        { type: "text", text: "; converting to Tokyo time." },
        {
          type: "tool_use",
          id: "toolu_04",
          name: "get_time",
          input: { timezone: "Asia/Tokyo" },
        },
      ],
      stop_reason: "tool_use",
    },
    toolUseIds: ["srvtoolu_03", "toolu_04"],
    openCalls: ["toolu_04"],
    dropped: [],
  },
  {
    name: "vision with cached system blocks and a document",
    request: {
      system: [{ type: "text", text: "You read charts.", cache_control: { type: "ephemeral" } }],
      messages: [
        {
          role: "user",
          content: [
            {
              type: "image",
              source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQ" },
            },
            { type: "image", source: { type: "url", url: "https://img.example/chart.png" } },
            {
              type: "document",
              source: { type: "url", url: "https://docs.example/report.pdf" },
              title: "Report",
            },
            { type: "text", text: "Compare the two charts with the report." },
          ],
        },
      ],
    },
    response: {
      content: [{ type: "text", text: "The first chart rises; the second is flat." }],
      stop_reason: "end_turn",
    },
    toolUseIds: [],
    openCalls: [],
    dropped: ["document content block"],
  },
];
