/**
 * A local service whose configuration a test changes while it runs, as a deploy changes a deployment's: the real
 * handlers over HTTP, reading the catalog on every request (a deployment's functions read it within their cache
 * time; the index jobs wait that long before they rely on it, which here is no time at all), a configuration
 * applied to the store as `npm start` and the deploy's custom resource apply it, and the index jobs driven one
 * unit of work at a time (one decision, one page of one segment, or one job's end), so that a test can check the
 * answers before, during and after a build.
 */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { CachedCatalogProvider, type DeployedCatalog } from '../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../shared/catalog/schema';
import { applyConfiguration, readDeployedCatalog } from '../../shared/catalog-store/catalog-store';
import type { ConfigurationPlan } from '../../shared/catalog-store/configuration-change';
import { createIndexJobs } from '../../shared/composition/index-job-task';
import { createHandler } from '../../shared/composition/pipeline';
import { type RuntimePorts, runtimePorts } from '../../shared/composition/ports';
import type { IndexJobs, SegmentRef } from '../../shared/indexing/index-jobs';
import type { Operation } from '../../shared/operation/operation';
import { batchCreateOperation } from '../../shared/operations/batch-create';
import { createOperation } from '../../shared/operations/create';
import { executeSqlOperation } from '../../shared/operations/execute-sql';
import { getListOperation } from '../../shared/operations/get-list-operation';
import { getOneOperation } from '../../shared/operations/get-one';
import { indexStatusOperation } from '../../shared/operations/index-status';
import { updateOperation } from '../../shared/operations/update';
import { IndexBuildStore } from '../../shared/storage/index-build-store';
import { catalogKey } from '../../shared/storage/item-keys';
import { ServiceHarness } from './service-harness';

const OPERATIONS: Record<string, Operation> = {
  'get-list': getListOperation,
  'get-one': getOneOperation,
  create: createOperation,
  'batch-create': batchCreateOperation,
  update: updateOperation,
  'execute-sql': executeSqlOperation,
  indexes: indexStatusOperation,
};

export interface LiveConfigurationOptions {
  /** Records per page an index job reads (small, so a build spans several units of work). */
  pageSize?: number;
  /** Records per segment (small, so a dataset spans several segments). */
  recordsPerSegment?: number;
  /** The store client the index jobs use, given the service's (a test may make it refuse some requests). */
  jobsClient?: (client: DynamoDBDocumentClient) => DynamoDBDocumentClient;
}

export class LiveConfiguration {
  readonly harness: ServiceHarness;
  private ports: RuntimePorts | undefined;
  private built: IndexJobs | undefined;
  private scan: { jobId: string; queue: SegmentRef[] } | undefined;
  /** Units of index work done, for a test's own account. */
  unitsDone = 0;

  constructor(
    configFile: string,
    private readonly options: LiveConfigurationOptions = {},
  ) {
    this.harness = new ServiceHarness(configFile, {
      indexJobs: false,
      loadHandler: async (file) => {
        const operation = OPERATIONS[file];
        return operation ? createHandler(operation, { ports: () => this.livePorts() }) : undefined;
      },
    });
  }

  start(): Promise<ServiceHarness> {
    return this.harness.start();
  }

  stop(): Promise<void> {
    return this.harness.stop();
  }

  /**
   * The container's ports, with the catalog's revision read on every request and the catalog read again whenever
   * it moved on (only the parsing is saved: what a request sees is always what the store holds).
   */
  private livePorts(): RuntimePorts {
    if (this.ports) return this.ports;
    const { client, tables } = this.harness.dynamo();
    let cached: { revision: unknown; catalog: DeployedCatalog | undefined } | undefined;
    const load = async () => {
      const { Item } = await client.send(
        new GetCommand({
          TableName: tables.catalog,
          Key: catalogKey(),
          ConsistentRead: true,
          ProjectionExpression: 'revision',
        }),
      );
      if (cached?.revision === Item?.revision) return cached?.catalog;
      const catalog = await readDeployedCatalog(client, tables.catalog);
      cached = { revision: Item?.revision, catalog };
      return catalog;
    };
    this.ports = { ...runtimePorts(), catalog: new CachedCatalogProvider({ load, ttlMs: 0 }) };
    return this.ports;
  }

  private tables() {
    const { tables } = this.harness.dynamo();
    return { catalog: tables.catalog, records: tables.records };
  }

  /** Apply a configuration to the store; throws the refusal (`ConfigError`) when it is refused. */
  async apply(config: CatalogConfig): Promise<ConfigurationPlan> {
    const { plan } = await applyConfiguration(this.harness.dynamo().client, this.tables(), config, { settleMs: 0 });
    return plan;
  }

  /** What applying `config` would do, refused changes included; nothing is written. */
  async plan(config: CatalogConfig): Promise<ConfigurationPlan> {
    const options = { settleMs: 0, dryRun: true };
    return (await applyConfiguration(this.harness.dynamo().client, this.tables(), config, options)).plan;
  }

  jobs(): IndexJobs {
    const { client } = this.harness.dynamo();
    this.built ??= createIndexJobs(this.options.jobsClient?.(client) ?? client, this.tables(), {
      writesPerSecond: 0,
      concurrency: 1,
      maxSegments: 4,
      recordsPerSegment: this.options.recordsPerSegment ?? 5,
      pageSize: this.options.pageSize ?? 3,
      settleMs: 0,
      isRunning: async () => false,
    });
    return this.built;
  }

  /**
   * One unit of index work; false when there was nothing left to do. `crash`: a segment's page is worked on and
   * its runner dies before saving where it stands (its keys are written, its position and counts are not), so
   * the next turn reads the page again.
   */
  async stepIndexJobs(crash = false): Promise<boolean> {
    const jobs = this.jobs();
    this.unitsDone += 1;
    if (!this.scan) {
      const step = await jobs.next('test-runner');
      if (step.action === 'done') return false;
      if (step.action === 'scan') this.scan = { jobId: step.jobId, queue: [...step.segments] };
      return true;
    }
    const ref = this.scan.queue.shift();
    if (ref) {
      const store = new IndexBuildStore(this.harness.dynamo().client, this.tables());
      const before = crash ? await store.readSegment(ref.jobId, ref.datasetCode, ref.segment) : undefined;
      const run = await jobs.runSegment(ref, 0);
      if (before) await store.saveSegment(ref.jobId, ref.datasetCode, ref.segment, before);
      if (!run.done || before) this.scan.queue.push(ref);
      return true;
    }
    // One unit: a dropped index's totals are removed a batch per unit, the job's end coming again until they are gone.
    await jobs.finish(this.scan.jobId, 0);
    this.scan = undefined;
    return true;
  }

  /** Index work until there is none left. */
  async runIndexJobs(): Promise<void> {
    for (let units = 0; await this.stepIndexJobs(); units++) {
      if (units > 10_000) throw new Error('the index jobs never ran out of work');
    }
  }
}
