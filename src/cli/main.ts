// Dispatch: `trajectory-recorder <command> [subcommand] [options]`. Help goes
// to stdout with exit 0; usage mistakes to stderr with exit 2; failures exit 1.
import { errorMessage } from "../util/error-message.js";
import { chat } from "./commands/chat.js";
import { checkpointsDelete, checkpointsList } from "./commands/checkpoints.js";
import { demo, report } from "./commands/demo-report.js";
import { emulator } from "./commands/emulator.js";
import { inspect, validate } from "./commands/files.js";
import { jobsFollow, jobsGet } from "./commands/jobs.js";
import { modelsCreate, modelsDelete } from "./commands/models.js";
import { log, sft, train } from "./commands/training.js";
import { type Command, GLOBAL_HELP, type Output, UsageError } from "./context.js";
import { packageVersion } from "./version.js";

const PROGRAM = "trajectory-recorder";

export const COMMANDS: Command[] = [
  modelsCreate,
  modelsDelete,
  checkpointsList,
  checkpointsDelete,
  jobsGet,
  jobsFollow,
  chat,
  log,
  train,
  sft,
  validate,
  inspect,
  demo,
  emulator,
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

${GLOBAL_HELP}
  -v, --version         print the version

Run '${PROGRAM} <command> --help' for a command's options.
Exit codes: 0 ok, 1 failure, 2 wrong usage.
`;
}

function commandHelp(c: Command): string {
  return `Usage: ${PROGRAM} ${c.name} ${c.usage}

${c.summary[0]?.toUpperCase()}${c.summary.slice(1)}.

${c.details}

${GLOBAL_HELP}
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
    if (error instanceof UsageError) {
      out.stderr.write(
        `${PROGRAM} ${command.name}: ${error.message}\nUsage: ${PROGRAM} ${command.name} ${command.usage}\nRun '${PROGRAM} ${command.name} --help' for details.\n`,
      );
      return 2;
    }
    out.stderr.write(`${PROGRAM} ${command.name}: ${errorMessage(error)}\n`);
    return 1;
  }
}
