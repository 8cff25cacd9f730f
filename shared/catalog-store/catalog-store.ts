/**
 * The applied configuration lives in the catalog table: applied on deploy (by a custom resource in AWS, by the
 * local bootstrap on start), read by the functions with an in-container cache. Secrets are never stored here.
 *
 * Applying is not storing: the new configuration is compared with the one applied last
 * (configuration-change.ts), refused as a whole when it would change what stored records mean, and otherwise
 * stored with the index registry it leads to (the index jobs of shared/indexing/ then build and drop in the
 * background). Beside the configuration the item keeps each backend function's version
 * (shared/catalog/function-versions.ts): an apply carries on those whose source is unchanged. The item itself and
 * its reads and writes are storage's (storage/catalog-item.ts); this is what goes in and out.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeployedCatalog } from '../catalog/catalog-provider';
import { type FunctionVersions, nextFunctionVersions, parseFunctionVersions } from '../catalog/function-versions';
import { parseIndexRegistry } from '../catalog/index-registry';
import type { CatalogConfig } from '../catalog/schema';
import { CatalogRevisionConflict, putCatalogItem, readCatalogItem } from '../storage/catalog-item';
import { CountStore } from '../storage/count-store';
import { DatasetProbes } from '../storage/dataset-probes';
import { startCountingEmpty } from '../storage/record-counter';
import {
  type AppliedState,
  type ConfigurationPlan,
  NO_RETIRED_DEFINITIONS,
  planConfigurationChange,
  type RetiredDefinitions,
} from './configuration-change';
import { ConfigError, parseStoredConfig } from './read-config';

/** The configuration without key material (access keys, signing secrets, webhook secrets). */
export function withoutSecrets(config: CatalogConfig): CatalogConfig {
  const { defaultSigningSecret: _default, ...rest } = config;
  return {
    ...rest,
    applications: config.applications.map(({ accessKey: _key, signingSecret: _secret, ...app }) => app),
    ...(config.webhooks ? { webhooks: config.webhooks.map(({ secret: _secret, ...webhook }) => webhook) } : {}),
  };
}

/** Everything the catalog item holds, validated. */
export interface AppliedCatalog extends DeployedCatalog {
  retired: RetiredDefinitions;
  revision: number;
  runner: unknown;
}

function parseRetired(value: unknown): RetiredDefinitions {
  const raw = value as Partial<RetiredDefinitions> | undefined;
  return {
    datasets: Array.isArray(raw?.datasets) ? raw.datasets : [],
    fields: raw?.fields && typeof raw.fields === 'object' ? raw.fields : {},
  };
}

/** Read the catalog item; `undefined` when no configuration has been applied. */
export async function readAppliedCatalog(
  client: DynamoDBDocumentClient,
  table: string,
): Promise<AppliedCatalog | undefined> {
  const item = await readCatalogItem(client, table);
  if (!item) return undefined;
  return {
    config: parseStoredConfig(item.config, `table ${table}`),
    functionVersions: parseFunctionVersions(item.functionVersions),
    // An item written before indexes were versioned names none: every dataset is then served without indexes
    // (exact, within the list read budget) until the next apply builds them.
    indexes: parseIndexRegistry(item.indexes) ?? {},
    retired: item.retired === undefined ? NO_RETIRED_DEFINITIONS : parseRetired(item.retired),
    revision: item.revision,
    runner: item.runner,
    ...(item.writtenAt === undefined ? {} : { deployedAt: item.writtenAt }),
  };
}

/** Read the current catalog: configuration, functions' versions, indexes; `undefined` when none was applied. */
export async function readDeployedCatalog(
  client: DynamoDBDocumentClient,
  table: string,
): Promise<DeployedCatalog | undefined> {
  const applied = await readAppliedCatalog(client, table);
  if (!applied) return undefined;
  const { config, functionVersions, indexes, deployedAt } = applied;
  return { config, functionVersions, indexes, ...(deployedAt === undefined ? {} : { deployedAt }) };
}

/** Read the current configuration; `undefined` when none has been applied. */
export async function readCatalog(client: DynamoDBDocumentClient, table: string): Promise<CatalogConfig | undefined> {
  return (await readDeployedCatalog(client, table))?.config;
}

export interface CatalogTables {
  catalog: string;
  records: string;
}

export interface ApplyOptions {
  now?: () => number;
  /** How long until every function serves the new configuration (ms): index builds start after it. */
  settleMs: number;
  /** Where a refusal says the configuration came from (a file name). */
  source?: string;
  /** Compare only: answer the plan (refused changes included), write nothing. */
  dryRun?: boolean;
}

export interface ApplyResult {
  plan: ConfigurationPlan;
  functionVersions: FunctionVersions;
}

/** How many times an apply reads again after losing a race with an index job's step (each takes milliseconds). */
const APPLY_ATTEMPTS = 10;

/**
 * Apply a validated configuration to a store: compare it with the one applied last, refuse it as a whole with
 * every problem by path (`ConfigError`, nothing written), or store it with its index registry and its functions'
 * versions. Returns the plan it followed.
 */
export async function applyConfiguration(
  client: DynamoDBDocumentClient,
  tables: CatalogTables,
  config: CatalogConfig,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const now = options.now ?? Date.now;
  const facts = new DatasetProbes(client, tables.records);
  const stored = withoutSecrets(config);
  for (let attempt = 1; ; attempt++) {
    const applied = await readAppliedCatalog(client, tables.catalog);
    const previous: AppliedState | undefined = applied && {
      config: applied.config,
      indexes: applied.indexes,
      retired: applied.retired,
    };
    const at = now();
    const plan = await planConfigurationChange(previous, stored, facts, { now: at, settleMs: options.settleMs });
    if (plan.refused.length > 0 && !options.dryRun) {
      throw new ConfigError(
        `${options.source ?? 'configuration'} (compared with the configuration applied last)`,
        plan.refused,
      );
    }
    const functionVersions = nextFunctionVersions(applied?.functionVersions ?? {}, config.functions ?? [], at);
    if (options.dryRun) return { plan, functionVersions };
    try {
      await putCatalogItem(
        client,
        tables.catalog,
        {
          config: stored,
          functionVersions,
          indexes: plan.next.indexes,
          retired: plan.next.retired,
          runner: applied?.runner,
        },
        at,
        applied?.revision,
      );
      await startCountingNewDatasets(client, tables.records, previous, stored, facts);
      return { plan, functionVersions };
    } catch (error) {
      if (!(error instanceof CatalogRevisionConflict) || attempt === APPLY_ATTEMPTS) throw error;
    }
  }
}

/**
 * The datasets this configuration names first (in no configuration applied before, with no index registry entry of
 * their own) that hold no records start their record count at zero, so that a bulk load before any list never makes
 * the first list read the whole partition (storage/record-counter.ts, `startCountingEmpty`).
 */
async function startCountingNewDatasets(
  client: DynamoDBDocumentClient,
  recordsTable: string,
  previous: AppliedState | undefined,
  config: CatalogConfig,
  facts: DatasetProbes,
): Promise<void> {
  const known = new Set(previous?.config.datasets.map((dataset) => dataset.datasetCode) ?? []);
  const counts = new CountStore(client, recordsTable);
  for (const { datasetCode } of config.datasets) {
    if (known.has(datasetCode) || previous?.indexes[datasetCode] !== undefined) continue;
    if (await facts.hasRecords(datasetCode)) continue;
    await startCountingEmpty(counts, datasetCode, facts.meter);
  }
}
