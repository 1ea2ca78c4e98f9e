// What `sft` selects: the filter flags read into an SftFilter (each bad value
// refused naming its flag), and the counts it prints, dry run or not.
import {
  type SftFilter,
  type SftMetadataValue,
  type SftSelection,
  sftRowsFromStore,
} from "../training/index.js";
import { numberOption, str, type Values } from "./args.js";
import { UsageError } from "./context.js";
import { openStoreDir } from "./trajectory-source.js";

/** The options `sft` takes to select trajectories. */
export const SELECT_OPTIONS = {
  "from-store": { type: "string" },
  "min-reward": { type: "string" },
  eligible: { type: "boolean" },
  since: { type: "string" },
  until: { type: "string" },
  "served-by": { type: "string" },
  metadata: { type: "string", multiple: true },
  "dry-run": { type: "boolean" },
} as const;

const UNITS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };

/** A time flag: an ISO 8601 time, or a duration ago (`30m`, `24h`, `7d`). */
export function timeOption(name: string, value: string | undefined, now = Date.now()) {
  if (value === undefined) return undefined;
  const ago = /^(\d+(?:\.\d+)?)([smhd])$/.exec(value.trim());
  if (ago) return now - Number(ago[1]) * (UNITS[ago[2] as string] as number);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value.trim()) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new UsageError(
      `--${name} must be an ISO 8601 time (2026-11-28 or 2026-11-28T12:00:00Z) or a duration ago (30m, 24h, 7d); got ${JSON.stringify(value)}.`,
    );
  return ms;
}

/** `--metadata k=v`, repeatable: every pair must match. */
function metadataOption(values: Values): Record<string, SftMetadataValue> | undefined {
  const pairs = values.metadata;
  if (!Array.isArray(pairs) || pairs.length === 0) return undefined;
  const out: Record<string, SftMetadataValue> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0)
      throw new UsageError(
        `--metadata takes KEY=VALUE (e.g. --metadata tier=pro); got ${JSON.stringify(pair)}.`,
      );
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/** The filter the flags say; store-only flags without --from-store are refused naming the flag. */
export function filterOf(values: Values, fromStore: boolean): SftFilter {
  const filter: SftFilter = {
    minReward: numberOption("min-reward", str(values, "min-reward")),
    metadata: metadataOption(values),
  };
  const storeOnly = {
    eligible: values.eligible === true ? true : undefined,
    since: timeOption("since", str(values, "since")),
    until: timeOption("until", str(values, "until")),
    model: str(values, "served-by"),
  };
  const flags = { eligible: "eligible", since: "since", until: "until", model: "served-by" };
  for (const [key, value] of Object.entries(storeOnly)) {
    if (value === undefined) continue;
    if (!fromStore)
      throw new UsageError(
        `--${flags[key as keyof typeof flags]} selects from a store's records: it needs --from-store DIR (a file's trajectories carry no eligibility, time or serving model).`,
      );
    (filter as Record<string, unknown>)[key] = value;
  }
  if (filter.model === "")
    throw new UsageError("--served-by must name a model; got an empty value.");
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until)
    throw new UsageError(
      `--since (${new Date(filter.since).toISOString()}) must be before --until (${new Date(filter.until).toISOString()}).`,
    );
  return filter;
}

/** The selection from the store in `dir`, which is closed again. */
export async function selectFromStore(dir: string, filter: SftFilter): Promise<SftSelection> {
  const store = await openStoreDir(
    dir,
    `--from-store ${dir}`,
    "--from-store",
    "stop it, or copy the directory and select from the copy.",
  );
  try {
    return sftRowsFromStore(store, filter);
  } finally {
    await store.close();
  }
}

/** The counts as lines: what was selected, and what was left out and why. */
export function describeSelection(s: SftSelection, filter: SftFilter): string[] {
  const c = s.counts;
  const d = c.dropped;
  const out: string[] = [];
  out.push(`trajectories: ${c.considered} considered, ${c.selected} selected`);
  const left = [
    [d.window, "outside --since/--until"],
    [d.ineligible, filter.eligible ? "not eligible (or not yet rated)" : "marked not eligible"],
    [d.reward, `below --min-reward ${filter.minReward}`],
    [d.model, `not served by ${filter.model}`],
    [d.metadata, "not matching --metadata"],
  ].filter(([n]) => (n as number) > 0);
  if (left.length > 0) out.push(`left out: ${left.map(([n, why]) => `${n} ${why}`).join(", ")}`);
  out.push(
    `histories: ${d.failedGeneration} cut before a generation that errored, was cut off or interrupted; ${d.noAssistantTurn} without an assistant turn`,
  );
  out.push(`rows: ${c.rows} (${c.duplicates} duplicate${c.duplicates === 1 ? "" : "s"} left out)`);
  return out;
}
