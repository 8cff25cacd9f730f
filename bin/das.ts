/**
 * `das`: the service's command-line tool for the people who meet it first — run it locally, check a
 * configuration, sign requests, mint browser tokens, call an operation, print the OpenAPI document.
 * `bin/das.js` is the executable (`npx das`); it loads this file through tsx, as `npm start` does.
 */
import { ConfigError } from '../shared/catalog-store/load-config';
import { CommandFailure, type CommandIo, processIo, UsageError } from './cli/cli-io';

export const USAGE = `Usage: das <command> [options]      (das <command> --help for its options)

Commands:
  serve               run the whole service on this machine (what npm start runs)
  config validate     check a configuration file; every problem with its path
  sign                print the four signed headers of a request (--curl: a signed curl command)
  token               mint a pre-generated token {token, timeStamp, expiresAt} for a browser
  call <operation>    sign and send a request, print the response envelope
  openapi             print the OpenAPI document (--write: refresh docs/openapi.json, docs/config.schema.json)

Examples:
  das serve --port 3000
  das config validate config/demo.json
  das sign --app app-demo --dataset orders --key ak-7f3c9a1b2d4e --secret sk-demo-secret
  das call get-list --dataset orders --param pageSize:=5
`;

type Command = (args: string[], io: CommandIo) => Promise<void>;

// Each command's module is loaded when it runs: `das sign` need not load the local server's DynamoDB stack,
// which would double its start-up time.
const COMMANDS: Record<string, Command> = {
  serve: async (args) => (await import('./local-server')).runServe(args, 'das serve'),
  config: async (args, io) => (await import('./cli/config-command')).runConfig(args, io),
  sign: async (args, io) => (await import('./cli/sign-command')).runSign(args, io),
  token: async (args, io) => (await import('./cli/token-command')).runToken(args, io),
  call: async (args, io) => (await import('./cli/call-command')).runCall(args, io),
  openapi: async (args, io) => (await import('./cli/openapi-command')).runOpenApi(args, io),
};

/** Run a command line; answers the exit code instead of exiting, so it can be called in-process. */
export async function runDas(argv: string[], io: CommandIo = processIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    // Asked for, the usage is the answer (stdout, 0); a bare `das` is a wrong command line (stderr, 2).
    if (name === undefined) {
      io.err(USAGE);
      return 2;
    }
    io.out(USAGE);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`das: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  try {
    await command(args, io);
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
    if (error instanceof ConfigError) {
      io.err(`Configuration refused.\n${error.message}\n`);
      return 1;
    }
    io.err(`das ${name}: ${(error as Error).message}\n`);
    return 1;
  }
}

/** The process entry: `bin/das.js` (npx das) and `tsx bin/das.ts` (npm run sign) both end here. */
export function main(argv: string[] = process.argv.slice(2)): void {
  runDas(argv).then((code) => {
    // Set, not exit: pending output is flushed first, and `serve` keeps running until a signal.
    process.exitCode = code;
  });
}

if (require.main === module) main();
