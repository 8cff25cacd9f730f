/**
 * Lookups over a validated configuration: applications, datasets (with the indexes the store has built for them),
 * grants, registered queries and backend functions (with the versions their deployments gave them), with the
 * defaults of the contract filled in. Built once per configuration version and shared by every request.
 */
import type { FunctionVersion, FunctionVersions } from './function-versions';
import { type DatasetIndexes, datasetIndexes, type IndexRegistry, initialIndexRegistry } from './index-registry';
import type {
  ApplicationConfig,
  CatalogConfig,
  DatasetConfig,
  FieldConfig,
  FunctionConfig,
  GrantConfig,
  QueryConfig,
  RelationConfig,
  WebhookConfig,
} from './schema';
import { DEFAULT_CHANGE_RETENTION_DAYS } from './schema';

export const DEFAULT_QUOTA = { perMinute: 600, perHour: 10_000, perDay: 100_000, concurrent: 10 } as const;
export type Quota = { perMinute: number; perHour: number; perDay: number; concurrent: number };

export interface Application {
  appCode: string;
  name: string;
  quota: Quota;
  grants: ReadonlyMap<string, GrantConfig>;
  config: ApplicationConfig;
}

export interface Dataset {
  datasetCode: string;
  appCode: string;
  name: string;
  fields: readonly FieldConfig[];
  fieldsByName: ReadonlyMap<string, FieldConfig>;
  /** Its many-to-one links to other datasets, by name (docs/interface.md §21). */
  relations: ReadonlyMap<string, RelationConfig>;
  /** Its indexes as the store has them: which the planner may use, which every write keeps up to date. */
  indexes: DatasetIndexes;
}

/** A backend function as deployed: its configuration and, in a deployed catalog, its version. */
export interface BackendFunction {
  config: FunctionConfig;
  /** Absent only in a catalog built from a configuration in hand (tools, tests), which no deployment wrote. */
  version?: FunctionVersion;
}

export class Catalog {
  readonly timeZone: string;
  readonly defaultPageSize: number;
  /** How long change events are kept (docs/interface.md §18). */
  readonly changeRetentionDays: number;
  private readonly webhooks: readonly WebhookConfig[];
  private readonly applications = new Map<string, Application>();
  private readonly datasets = new Map<string, Dataset>();
  private readonly queriesByCode = new Map<string, QueryConfig>();
  private readonly queriesById = new Map<string, QueryConfig>();
  private readonly functions = new Map<string, FunctionConfig>();

  /**
   * `indexes`: the registry the store keeps beside the configuration (shared/catalog/index-registry.ts); without
   * one (a configuration in hand that no store applied), every indexed field counts as complete.
   */
  constructor(
    readonly config: CatalogConfig,
    private readonly functionVersions: FunctionVersions = {},
    /** When the deployment wrote it (epoch ms); 0 for a catalog built from a configuration in hand. */
    readonly deployedAt = 0,
    indexes: IndexRegistry = initialIndexRegistry(config),
  ) {
    this.timeZone = config.timeZone ?? 'UTC';
    this.defaultPageSize = config.defaultPageSize ?? 20;
    this.changeRetentionDays = config.changeRetentionDays ?? DEFAULT_CHANGE_RETENTION_DAYS;
    this.webhooks = config.webhooks ?? [];
    for (const app of config.applications) {
      this.applications.set(app.appCode, {
        appCode: app.appCode,
        name: app.name ?? app.appCode,
        quota: { ...DEFAULT_QUOTA, ...app.quota },
        grants: new Map((app.grants ?? []).map((grant) => [grant.datasetCode, grant])),
        config: app,
      });
    }
    for (const dataset of config.datasets) this.datasets.set(dataset.datasetCode, toDataset(dataset, indexes));
    for (const query of config.queries ?? []) {
      this.queriesByCode.set(`${query.appCode}/${query.sqlCode}`, query);
      if (query.id !== undefined) this.queriesById.set(`${query.appCode}/${query.id}`, query);
    }
    for (const fn of config.functions ?? []) this.functions.set(fn.name, fn);
  }

  application(appCode: string): Application | undefined {
    return this.applications.get(appCode);
  }

  allApplications(): Application[] {
    return [...this.applications.values()];
  }

  dataset(datasetCode: string): Dataset | undefined {
    return this.datasets.get(datasetCode);
  }

  allDatasets(): Dataset[] {
    return [...this.datasets.values()];
  }

  /** A registered query of `appCode`, by its code or numeric id; another application's query is not found. */
  query(appCode: string, key: { sqlCode: string } | { id: number }): QueryConfig | undefined {
    return 'sqlCode' in key
      ? this.queriesByCode.get(`${appCode}/${key.sqlCode}`)
      : this.queriesById.get(`${appCode}/${key.id}`);
  }

  /** Every webhook subscription, in the configuration's order. */
  allWebhooks(): readonly WebhookConfig[] {
    return this.webhooks;
  }

  /** A webhook subscription by id. */
  webhook(id: string): WebhookConfig | undefined {
    return this.webhooks.find((webhook) => webhook.id === id);
  }

  /** The subscriptions that receive a dataset's events. */
  webhooksOf(datasetCode: string): WebhookConfig[] {
    return this.webhooks.filter((webhook) => webhook.datasets.includes(datasetCode));
  }

  /** A backend function of `appCode` by name; another application's function is not found. */
  backendFunction(appCode: string, name: string): BackendFunction | undefined {
    const config = this.functions.get(name);
    if (!config || config.appCode !== appCode) return undefined;
    const version = Object.hasOwn(this.functionVersions, name) ? this.functionVersions[name] : undefined;
    return version ? { config, version } : { config };
  }
}

/** A dataset of the configuration; its indexes from `registry` (default: every indexed field complete). */
export function toDataset(
  config: DatasetConfig,
  registry: IndexRegistry = initialIndexRegistry({ applications: [], datasets: [config] }),
): Dataset {
  return {
    datasetCode: config.datasetCode,
    appCode: config.appCode,
    name: config.name ?? config.datasetCode,
    fields: config.fields,
    fieldsByName: new Map(config.fields.map((field) => [field.name, field])),
    relations: new Map((config.relations ?? []).map((relation) => [relation.name, relation])),
    indexes: datasetIndexes(registry[config.datasetCode]),
  };
}
