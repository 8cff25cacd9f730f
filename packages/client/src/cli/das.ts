/**
 * `das`, the command-line tool of the client package: sign requests, mint browser tokens, call an operation.
 * The service's repository runs the same tool with its own commands added (serve, config validate, openapi)
 * and its demo keys as the default, so both spell every shared command the same way.
 */
import { CommandFailure, type CommandIo, processIo, UsageError } from './cli-io.js';

export type Command = (args: string[], io: CommandIo) => Promise<void> | void;

export interface CommandEntry {
  /** As the usage lists it, e.g. `call <operation>`. */
  synopsis: string;
  summary: string;
  run: Command;
}

/** The commands of the package. Each module is loaded when its command runs. */
export const CLIENT_COMMANDS: Record<string, CommandEntry> = {
  sign: {
    synopsis: 'sign',
    summary: 'print the signed headers of a request (X-Dataset-Code with --dataset; --curl: a signed curl)',
    run: async (args, io) => (await import('./sign-command.js')).runSign(args, io),
  },
  token: {
    synopsis: 'token',
    summary: 'mint a pre-generated token {token, timeStamp, timestamp, expiresAt} for a browser',
    run: async (args, io) => (await import('./token-command.js')).runToken(args, io),
  },
  call: {
    synopsis: 'call <operation>',
    summary: 'sign and send a request, print the response envelope',
    run: async (args, io) => (await import('./call-command.js')).runCall(args, io),
  },
};

const CLIENT_EXAMPLES = [
  'das sign --app app-demo --dataset orders --key ak-7f3c9a1b2d4e --secret sk-demo-secret',
  'DAS_URL=http://127.0.0.1:3000 DAS_APP_CODE=app-demo DAS_ACCESS_KEY=… DAS_SIGNING_SECRET=… \\\n    das call get-list --dataset orders --param pageSize:=5',
];

export function usage(commands: Record<string, CommandEntry>, examples: readonly string[]): string {
  const width = Math.max(...Object.values(commands).map((c) => c.synopsis.length)) + 2;
  return [
    'Usage: das <command> [options]      (das <command> --help for its options)',
    '',
    'Commands:',
    ...Object.values(commands).map((c) => `  ${c.synopsis.padEnd(Math.max(width, 20))}${c.summary}`),
    '',
    'Examples:',
    ...examples.map((e) => `  ${e}`),
    '',
  ].join('\n');
}

export interface DasOptions {
  commands?: Record<string, CommandEntry>;
  examples?: readonly string[];
  /** Failures a command may throw besides usage errors and failures (a refused configuration). */
  describeError?: (error: unknown) => string | undefined;
}

/** Run a command line; answers the exit code instead of exiting, so it can be called in-process. */
export async function runDas(argv: string[], io: CommandIo = processIo, options: DasOptions = {}): Promise<number> {
  const commands = options.commands ?? CLIENT_COMMANDS;
  const text = usage(commands, options.examples ?? CLIENT_EXAMPLES);
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    // Asked for, the usage is the answer (stdout, 0); a bare `das` is a wrong command line (stderr, 2).
    if (name === undefined) {
      io.err(text);
      return 2;
    }
    io.out(text);
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.err(`das: unknown command '${name}'\n\n${text}`);
    return 2;
  }
  try {
    await command.run(args, io);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`das ${name}: ${error.message}\nSee: ${error.helpCommand}\n`);
      return 2;
    }
    if (error instanceof CommandFailure) {
      if (error.message) io.err(`${error.message}\n`);
      return 1;
    }
    const described = options.describeError?.(error);
    io.err(described ?? `das ${name}: ${(error as Error).message}\n`);
    return 1;
  }
}

/** The process entry of the package's `das`. */
export function main(argv: string[] = process.argv.slice(2)): void {
  runDas(argv).then((code) => {
    // Set, not exit: pending output is flushed first.
    process.exitCode = code;
  });
}
