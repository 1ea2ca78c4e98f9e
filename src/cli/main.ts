// Dispatch: `trajectory-recorder <command> [subcommand] [options]`. Help goes
// to stdout with exit 0; errors to stderr (and, with --json, as JSON on
// stdout) with the exit codes of EXIT (context.ts; the table in docs/cli.md).
import { InvalidArgumentError, NotFoundError } from "../client/index.js";
import { ReportSourceError } from "../report/index.js";
import { InvalidTrainingOptionsError } from "../training/index.js";
import { TrajectoryValidationError } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import { chat } from "./commands/chat.js";
import { checkpointsDelete, checkpointsList } from "./commands/checkpoints.js";
import { demo, report } from "./commands/demo-report.js";
import { emulator } from "./commands/emulator.js";
import { feedback } from "./commands/feedback.js";
import { inspect, validate } from "./commands/files.js";
import { importOpenAiFtCommand } from "./commands/import.js";
import { jobsFollow, jobsGet } from "./commands/jobs.js";
import { modelsCreate, modelsDelete, modelsGet, modelsList } from "./commands/models.js";
import { proxy } from "./commands/proxy.js";
import { replay } from "./commands/replay.js";
import { rft } from "./commands/rft.js";
import { sessionsList, sessionsShow } from "./commands/sessions.js";
import { log, sft, train } from "./commands/training.js";
import {
  COMMON_HELP,
  type Command,
  EXIT,
  InvalidDataError,
  NotFoundCliError,
  type Output,
  SERVICE_HELP,
  UsageError,
  withoutCredentials,
} from "./context.js";
import { packageVersion } from "./version.js";

const PROGRAM = "trajectory-recorder";

export const COMMANDS: Command[] = [
  modelsCreate,
  modelsList,
  modelsGet,
  modelsDelete,
  checkpointsList,
  checkpointsDelete,
  jobsGet,
  jobsFollow,
  chat,
  log,
  train,
  sft,
  replay,
  rft,
  validate,
  inspect,
  importOpenAiFtCommand,
  demo,
  emulator,
  proxy,
  sessionsList,
  sessionsShow,
  feedback,
  report,
];

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const rows = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: ${PROGRAM} <command> [options]

Record, inspect and train on agent trajectories with the Training Service,
or run its emulator locally.

Commands:
${rows.join("\n")}

${SERVICE_HELP}

${COMMON_HELP}
  -v, --version         print the version

Run '${PROGRAM} <command> --help' for a command's options.
Exit codes: 0 ok, 1 failure, 2 wrong usage, 3 invalid data, 4 not found.
`;
}

function commandHelp(c: Command): string {
  return `Usage: ${PROGRAM} ${c.name} ${c.usage}

${c.summary[0]?.toUpperCase()}${c.summary.slice(1)}.

${c.details}

${c.offline ? "" : `${SERVICE_HELP}\n\n`}${COMMON_HELP}
`;
}

function groupHelp(group: string, members: Command[]): string {
  const width = Math.max(...members.map((c) => c.name.length));
  return `Usage: ${PROGRAM} ${group} <${members.map((c) => c.name.split(" ")[1]).join("|")}> [options]

${members.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

Run '${PROGRAM} ${group} <subcommand> --help' for its options.
`;
}

const wantsHelp = (args: string[]) => args.includes("--help") || args.includes("-h");

/** Runs one command line; resolves to the exit code (-1: keep running, a server). */
export async function main(argv: string[], out: Output): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    out.stderr.write(topHelp());
    return 2;
  }
  if (first === "--help" || first === "-h" || (first === "help" && rest.length === 0)) {
    out.stdout.write(topHelp());
    return 0;
  }
  if (first === "--version" || first === "-v" || first === "version") {
    out.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (first === "help") return main([...rest, "--help"], out);

  const members = COMMANDS.filter((c) => c.name.split(" ")[0] === first);
  if (members.length === 0) {
    out.stderr.write(
      `${PROGRAM}: unknown command ${JSON.stringify(first)}. Run '${PROGRAM} --help' for the list.\n`,
    );
    return 2;
  }
  let command = members.find((c) => c.name === first);
  let args = rest;
  if (!command) {
    const [sub, ...subArgs] = rest;
    command = members.find((c) => c.name === `${first} ${sub}`);
    if (!command) {
      if (sub === undefined || sub === "--help" || sub === "-h") {
        const stream = sub === undefined ? out.stderr : out.stdout;
        stream.write(groupHelp(first, members));
        return sub === undefined ? 2 : 0;
      }
      out.stderr.write(
        `${PROGRAM} ${first}: unknown subcommand ${JSON.stringify(sub)}.\n${groupHelp(first, members)}`,
      );
      return 2;
    }
    args = subArgs;
  }
  if (wantsHelp(args)) {
    out.stdout.write(commandHelp(command));
    return 0;
  }
  try {
    return await command.run(args, out);
  } catch (error) {
    const code = exitCodeOf(error);
    const message = tidy(redact(errorMessage(error), argv), command.name);
    const where = `${PROGRAM} ${command.name}`;
    if (args.includes("--json")) {
      out.stdout.write(
        `${JSON.stringify({ error: { type: ERROR_TYPES[code], message, exit_code: code } }, null, 2)}\n`,
      );
    }
    if (code === EXIT.usage) {
      out.stderr.write(
        `${where}: ${message}\nUsage: ${where} ${command.usage}\nRun '${where} --help' for details.\n`,
      );
    } else out.stderr.write(`${where}: ${message}\n`);
    return code;
  }
}

/**
 * A message as the CLI prints it after `PROGRAM COMMAND: `: without a second
 * `COMMAND:` of the library's own, and without doubled stops (a sentence
 * ending in "." joined with "; " or closed again).
 */
export function tidy(message: string, command: string): string {
  let out = message;
  for (const prefix of [`${command}: `, `${command.split(" ").at(-1)}: `])
    if (out.startsWith(prefix)) out = out.slice(prefix.length);
  return out
    .replace(/\.;/g, ";")
    .replace(/\.{4,}/g, "...")
    .replace(/(?<!\.)([.?!])\.(?=\s|$)/g, "$1");
}

const ERROR_TYPES: Record<number, string> = {
  [EXIT.failure]: "failure",
  [EXIT.usage]: "usage",
  [EXIT.invalidData]: "invalid_data",
  [EXIT.notFound]: "not_found",
};

/** The exit code of an error a command threw. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (ReportSourceError.isInstance(error))
    return error.reason === "invalid"
      ? EXIT.invalidData
      : error.reason === "model_not_found"
        ? EXIT.notFound
        : EXIT.usage;
  if (error instanceof NotFoundCliError || error instanceof NotFoundError) return EXIT.notFound;
  // The openai SDK's own 404 (chat completions of a missing model or step).
  if ((error as { status?: unknown } | null)?.status === 404) return EXIT.notFound;
  if (
    error instanceof InvalidDataError ||
    error instanceof TrajectoryValidationError ||
    error instanceof InvalidTrainingOptionsError ||
    error instanceof InvalidArgumentError
  )
    return EXIT.invalidData;
  return EXIT.failure;
}

/**
 * A message as it may be printed: URLs without user or password, and the
 * value of --api-key-file left out (a key typed where its path goes).
 */
export function redact(message: string, argv: readonly string[]): string {
  let text = message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s/@]*@/gi, (m) => withoutCredentials(m));
  argv.forEach((arg, i) => {
    const value =
      arg === "--api-key-file"
        ? argv[i + 1]
        : arg.startsWith("--api-key-file=")
          ? arg.slice(15)
          : undefined;
    if (value && value.length >= 4) text = text.split(value).join("<--api-key-file value>");
  });
  return text;
}
