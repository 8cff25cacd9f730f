/**
 * `das` in the service's repository: the client package's tool (sign, token, call) plus what needs the
 * service itself — run it locally, check a configuration, print the OpenAPI document — with the demo
 * configuration's keys and the running local service as defaults. `bin/das.js` is the executable (`npx das`
 * here); it loads this file through tsx, as `npm start` does.
 */
import { type CommandIo, processIo } from '../packages/client/src/cli/cli-io';
import { CLIENT_COMMANDS, type CommandEntry, runDas as runClientDas } from '../packages/client/src/cli/das';
import { ConfigError, loadConfigFile } from '../shared/catalog-store/load-config';
import { DEFAULT_CONFIG } from './local/default-config';
import { readLocalServiceUrl } from './local/service-address';

const COMMANDS: Record<string, CommandEntry> = {
  serve: {
    synopsis: 'serve',
    summary: 'run the whole service on this machine (what npm start runs)',
    run: async (args) => (await import('./local-server')).runServe(args, 'das serve'),
  },
  config: {
    synopsis: 'config validate|plan',
    summary: 'check a configuration file; or what applying it would change (every refused change with its path)',
    run: async (args, io) => (await import('./cli/config-command')).runConfig(args, io),
  },
  indexes: {
    synopsis: 'indexes',
    summary: "the datasets' indexes and how far their builds have come, from a running service",
    run: async (args, io) => (await import('./cli/indexes-command')).runIndexes(args, io),
  },
  ...CLIENT_COMMANDS,
  openapi: {
    synopsis: 'openapi',
    summary: 'print the OpenAPI document (--write: refresh docs/openapi.json, docs/config.schema.json)',
    run: async (args, io) => (await import('./cli/openapi-command')).runOpenApi(args, io),
  },
  webhooks: {
    synopsis: 'webhooks status|replay',
    summary: "webhook subscriptions' deliveries, failures and parked events; send events again (--stage: a deployment)",
    run: async (args, io) => (await import('./cli/webhooks-command')).runWebhooks(args, io),
  },
  sql: {
    synopsis: 'sql status',
    summary:
      'the MySQL mirror of custom SQL: per dataset its rows, the change log position applied, its lag (--stage: a deployment)',
    run: async (args, io) => (await import('./cli/sql-command')).runSql(args, io),
  },
  'user-key': {
    synopsis: 'user-key create',
    summary: 'make a personal access key for a user; shows the key once, and its digest',
    run: async (args, io) => (await import('./cli/user-key-command')).runUserKey(args, io),
  },
};

const EXAMPLES = [
  'das serve --port 3000',
  'das config validate config/demo.json',
  'das config plan --config config/demo.json --data-dir .data',
  'das indexes --dataset orders',
  'das sign --app app-demo --dataset orders --key ak-7f3c9a1b2d4e --secret sk-demo-secret',
  'das call get-list --dataset orders --param pageSize:=5',
  'das sql status',
  'das user-key create --app app-demo --user alice',
  'das webhooks replay --id orders-to-crm --since 2h',
];

/** The repository's defaults: the demo configuration's keys, validated as the service loads them. */
export const repositoryIo = (io: CommandIo): CommandIo => ({
  ...io,
  workspace: {
    defaultConfig: DEFAULT_CONFIG,
    loadConfig: loadConfigFile,
    localServiceUrl: readLocalServiceUrl,
  },
});

/** Run a command line; answers the exit code instead of exiting, so it can be called in-process. */
export function runDas(argv: string[], io: CommandIo = processIo): Promise<number> {
  return runClientDas(argv, repositoryIo(io), {
    commands: COMMANDS,
    examples: EXAMPLES,
    describeError: (error) => (error instanceof ConfigError ? `Configuration refused.\n${error.message}\n` : undefined),
  });
}

/** The process entry: `bin/das.js` (npx das) and `tsx bin/das.ts` (npm run sign) both end here. */
export function main(argv: string[] = process.argv.slice(2)): void {
  runDas(argv).then((code) => {
    // Set, not exit: pending output is flushed first, and `serve` keeps running until a signal.
    process.exitCode = code;
  });
}

if (require.main === module) main();
