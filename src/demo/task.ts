// The demo's task: a fruit stall whose stock changes every rollout. The
// shopper asks how many of a fruit are left; only the stall's tool knows.
import type { Trajectory } from "../trajectory/index.js";

export const FRUITS = ["apple", "banana", "cherry", "grape"] as const;
export const COUNTS = ["one", "two", "three", "four"] as const;

/** The tool the agent may call, in the Chat Completions shape. */
export const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "check_stock",
      description: "How many of a fruit the stall has left.",
      parameters: {
        type: "object",
        properties: { fruit: { type: "string", enum: [...FRUITS] } },
        required: ["fruit"],
        additionalProperties: false,
      },
    },
  },
];

/** One rollout's question and the stall's stock in that rollout. */
export interface Scenario {
  fruit: (typeof FRUITS)[number];
  stock: Record<string, (typeof COUNTS)[number]>;
}

/** The stock for a rollout, drawn from its seed (so a run is repeatable). */
export function scenario(fruit: Scenario["fruit"], seed: number): Scenario {
  let a = (seed * 2654435761) >>> 0;
  const next = () => {
    a = (Math.imul(a ^ (a >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return a / 2 ** 32;
  };
  const stock: Scenario["stock"] = {};
  for (const f of FRUITS)
    stock[f] = COUNTS[Math.floor(next() * COUNTS.length)] as Scenario["stock"][string];
  return { fruit, stock };
}

export const question = (s: Scenario) => `how many ${s.fruit} are left`;

/** What the tool answers for its JSON arguments. */
export function checkStock(s: Scenario, args: string): string {
  let fruit: unknown;
  try {
    fruit = (JSON.parse(args) as { fruit?: unknown }).fruit;
  } catch {
    return "error: arguments are not JSON";
  }
  return typeof fruit === "string" && fruit in s.stock
    ? `${s.stock[fruit]} left`
    : `error: no such fruit ${String(fruit)}`;
}

/** Whether the agent checked the stock of the fruit it was asked about. */
function checkedRightFruit(t: Trajectory, s: Scenario): boolean {
  type Call = { function?: { name?: string; arguments?: string } };
  return t.messages().some((m) =>
    ((m as { tool_calls?: Call[] }).tool_calls ?? []).some((c) => {
      if (c.function?.name !== "check_stock") return false;
      try {
        return (JSON.parse(c.function.arguments ?? "") as { fruit?: unknown }).fruit === s.fruit;
      } catch {
        return false;
      }
    }),
  );
}

/**
 * The reward, as the stall owner sees it: half for checking the stock of the
 * fruit asked about, half for then answering with exactly that number (a
 * guess, or a list of numbers, earns nothing).
 */
export function stockReward(t: Trajectory): number {
  const raw = t.metadata.scenario;
  const s = (typeof raw === "string" ? JSON.parse(raw) : raw) as Scenario;
  if (!checkedRightFruit(t, s)) return 0;
  const last = t.messages().at(-1);
  if (last?.role !== "assistant" || typeof last.content !== "string") return 0.5;
  const said = new Set(
    last.content.split(/\s+/).filter((w) => (COUNTS as readonly string[]).includes(w)),
  );
  return said.size === 1 && said.has(s.stock[s.fruit] as string) ? 1 : 0.5;
}
