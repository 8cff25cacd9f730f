/**
 * `das config validate <file>`: check a configuration file the way the service loads it; every problem, by path.
 * `das config plan --config <file>`: what applying it would do to a store that already holds a configuration and
 * records (docs/interface.md §17): the fields added and removed, the indexes to build or drop with the records
 * each touches, and every refused change. It compares with the configuration applied last to the local store
 * (`--data-dir`, default `.data`) or to a deployment's catalog (`--stage`, read with the caller's AWS credentials),
 * and writes nothing.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CommandFailure, type CommandIo, parseCommandArgs, UsageError } from '../../packages/client/src/cli/cli-io';
import { createDocumentClient } from '../../shared/aws/dynamodb';
import type { CatalogConfig } from '../../shared/catalog/schema';
import { applyConfiguration, type CatalogTables } from '../../shared/catalog-store/catalog-store';
import { type ConfigurationPlan, describeConfigurationPlan } from '../../shared/catalog-store/configuration-change';
import { ConfigError, loadConfigFile } from '../../shared/catalog-store/load-config';
import { CATALOG_TABLE, RECORDS_TABLE, tableNameFor } from '../../shared/storage/table-definitions';
import { localTableNames } from '../../shared/storage/table-setup';
import { startEmbeddedDynamo } from '../local/embedded-dynamo';
import { checkedStage } from './stage-option';

const HELP = 'das config --help';

export const CONFIG_USAGE = `Usage: das config validate <file> [--json]
       das config plan --config <file> [--data-dir <dir> | --stage <name>] [--json]

validate: checks a configuration file (docs/interface.md §9) as the service does when it loads it: the structure,
and the references between applications, datasets, grants and queries. Every problem is listed with its path, e.g.
  datasets[0].fields[1].options: an enum field needs options
Exit code 0 when valid, 1 when not.

plan: what applying the file would do, compared with the configuration applied last (docs/interface.md §17): per
dataset the fields added and removed and the indexes to build or drop, with the records each will touch, then
every refused change by path (a field's type changed, an enum option still in use removed, a dataset's owner
changed). Nothing is written. Exit code 0 when the change would be applied, 1 when it would be refused.

  --config <file>     the new configuration
  --data-dir <dir>    compare with the local store npm start keeps there (default: .data; stop npm start first)
  --stage <name>      compare with a deployment's catalog instead, read with your AWS credentials (AWS_REGION,
                      AWS_PROFILE or the usual variables)
  --json              print the result as JSON
`;

export async function runConfig(args: string[], io: CommandIo): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      json: { type: 'boolean' },
      config: { type: 'string' },
      'data-dir': { type: 'string' },
      stage: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
    true,
  );
  if (values.help) {
    io.out(CONFIG_USAGE);
    return;
  }
  const [action, ...rest] = positionals;
  if (action === 'plan') {
    if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}; the file goes in --config`, HELP);
    await runPlan(values, io);
    return;
  }
  if (action !== 'validate') {
    throw new UsageError(
      action
        ? `unknown config command '${action}'; the ones there are: validate, plan`
        : 'which config command? das config validate <file>, or das config plan --config <file>',
      HELP,
    );
  }
  const [file, ...more] = rest;
  if (!file) throw new UsageError('which file? das config validate <file>', HELP);
  if (more.length > 0) throw new UsageError(`one file at a time, not ${[file, ...more].join(' ')}`, HELP);
  try {
    const config = loadConfigFile(file);
    if (values.json) io.out(`${JSON.stringify({ file, valid: true, problems: [] }, null, 2)}\n`);
    else {
      io.out(
        `${file}: valid (${config.applications.length} applications, ${config.datasets.length} datasets, ${config.queries?.length ?? 0} queries)\n`,
      );
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (values.json) {
      io.out(`${JSON.stringify({ file, valid: false, problems: error.problems }, null, 2)}\n`);
      throw new CommandFailure();
    }
    throw new CommandFailure(error.message);
  }
}

interface PlanOptions {
  json?: boolean | undefined;
  config?: string | undefined;
  'data-dir'?: string | undefined;
  stage?: string | undefined;
}

async function runPlan(values: PlanOptions, io: CommandIo): Promise<void> {
  const file = values.config;
  if (!file) throw new UsageError('which configuration? das config plan --config <file>', HELP);
  if (values.stage !== undefined && values['data-dir'] !== undefined) {
    throw new UsageError('--data-dir or --stage: the local store or a deployment, not both', HELP);
  }
  checkedStage(values.stage, HELP);
  let config: CatalogConfig;
  try {
    config = loadConfigFile(file);
  } catch (error) {
    if (error instanceof ConfigError) throw new CommandFailure(error.message);
    throw error;
  }
  const { plan, against } =
    values.stage === undefined
      ? await planLocally(config, values['data-dir'] ?? '.data')
      : await planForStage(config, values.stage);
  if (values.json) {
    const { next: _next, ...shown } = plan;
    io.out(`${JSON.stringify({ file, against, ...shown }, null, 2)}\n`);
  } else {
    io.out(
      [
        `${file}, compared with ${plan.first ? 'nothing: no configuration was applied to' : 'the configuration applied last to'} ${against}:`,
        ...describeConfigurationPlan(plan),
        plan.refused.length === 0 ? 'Nothing refused: applying it starts what is listed above.' : '',
      ]
        .filter(Boolean)
        .join('\n')
        .concat('\n'),
    );
  }
  if (plan.refused.length > 0) throw new CommandFailure();
}

async function plan(client: DynamoDBClient, config: CatalogConfig, tables: CatalogTables): Promise<ConfigurationPlan> {
  const store = createDocumentClient(client);
  const { plan } = await applyConfiguration(store, tables, config, { settleMs: 0, dryRun: true });
  return plan;
}

/** Against the store `npm start` keeps in `dataDir` (the embedded store opened here, read and closed). */
async function planLocally(
  config: CatalogConfig,
  dataDir: string,
): Promise<{ plan: ConfigurationPlan; against: string }> {
  const storeDir = path.resolve(dataDir, 'dynamodb');
  const against = `the local store in ${path.resolve(dataDir)}`;
  if (!existsSync(storeDir))
    throw new CommandFailure(
      `no local store in ${path.resolve(dataDir)}: npm start has not run with --data-dir ${dataDir}`,
    );
  let dynamo: Awaited<ReturnType<typeof startEmbeddedDynamo>>;
  try {
    dynamo = await startEmbeddedDynamo(storeDir);
  } catch (error) {
    throw new CommandFailure(
      `cannot open the local store in ${path.resolve(dataDir)} (${(error as Error).message}): stop the npm start that uses it, then plan again`,
    );
  }
  try {
    const names = localTableNames('das-local');
    return {
      plan: await plan(dynamo.client, config, { catalog: names.Catalog as string, records: names.Records as string }),
      against,
    };
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') {
      throw new CommandFailure(
        `the local store in ${path.resolve(dataDir)} has no catalog yet: npm start has not applied a configuration`,
      );
    }
    throw error;
  } finally {
    await dynamo.close();
  }
}

/** Against a deployment's catalog, read with the caller's AWS credentials (the SDK's default chain). */
async function planForStage(
  config: CatalogConfig,
  stage: string,
): Promise<{ plan: ConfigurationPlan; against: string }> {
  const tables = { catalog: tableNameFor(stage, CATALOG_TABLE), records: tableNameFor(stage, RECORDS_TABLE) };
  const client = new DynamoDBClient({ maxAttempts: 5 });
  try {
    return { plan: await plan(client, config, tables), against: `stage '${stage}' (table ${tables.catalog})` };
  } catch (error) {
    if (error instanceof ConfigError) throw new CommandFailure(error.message);
    throw new CommandFailure(`cannot read stage '${stage}' (${(error as Error).name}: ${(error as Error).message})`);
  } finally {
    client.destroy();
  }
}
