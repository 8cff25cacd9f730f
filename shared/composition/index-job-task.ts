/**
 * Where index jobs are put together: `createIndexJobs` for any runner (the local server's, a benchmark's), and
 * `indexJobTask`, the one task of the deployment's state machine (lib/index-builds.ts): each invocation runs one
 * step of shared/indexing/index-jobs.ts (next, one segment's turn, finish) and writes its log line. The jobs are
 * built once per container from the function's environment.
 */
import { DescribeExecutionCommand, ExecutionDoesNotExist } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { indexJobDocumentClient } from '../aws/dynamodb';
import { stepFunctionsClient } from '../aws/step-functions';
import { CONFIGURATION_SETTLE_MS, IndexJobs, type NextStep, type SegmentRef } from '../indexing/index-jobs';
import type { SegmentConsumer } from '../indexing/segment-consumer';
import { type IndexJobWork, indexJobWorkOf, logIndexJobWork } from '../observability/request-log';
import { readIndexJobEnvironment } from '../runtime/environment';
import { DatasetBookkeeping } from '../storage/dataset-bookkeeping';
import { IndexBuildStore } from '../storage/index-build-store';

export interface IndexJobSettings {
  /** Writes a second of one job, its segments together (0: unpaced). */
  writesPerSecond: number;
  /** Segments that run at once. */
  concurrency: number;
  /** At most this many segments per dataset. */
  maxSegments: number;
  /** About this many records per segment. */
  recordsPerSegment: number;
  /** Records per page read. */
  pageSize: number;
  /** How long after a registry change the runner makes every function serves it (ms). */
  settleMs: number;
  isRunning: (owner: string) => Promise<boolean>;
  /** Consumers of each page after the index keys' own. */
  consumers?: readonly SegmentConsumer[];
  now?: () => number;
}

/** Page size and segment size of every runner: a page is a few hundred KB at most, a segment a few minutes' work. */
export const INDEX_JOB_PAGE_SIZE = 200;
export const RECORDS_PER_SEGMENT = 20_000;

export function createIndexJobs(
  client: DynamoDBDocumentClient,
  tables: { records: string; catalog: string },
  settings: IndexJobSettings,
): IndexJobs {
  return new IndexJobs({
    store: new IndexBuildStore(client, tables),
    catalog: { client, table: tables.catalog },
    bookkeeping: new DatasetBookkeeping(client, tables.records),
    isRunning: settings.isRunning,
    settleMs: settings.settleMs,
    maxSegments: settings.maxSegments,
    recordsPerSegment: settings.recordsPerSegment,
    pageSize: settings.pageSize,
    writesPerSecond: settings.writesPerSecond,
    concurrency: settings.concurrency,
    ...(settings.consumers ? { consumers: settings.consumers } : {}),
    ...(settings.now ? { now: settings.now } : {}),
  });
}

/** What the state machine sends each task invocation. */
export type IndexJobEvent =
  | { step: 'next'; owner: string }
  | ({ step: 'segment' } & SegmentRef)
  | { step: 'finish'; jobId: string };

export type IndexJobResult = NextStep | { done: boolean } | { finished: boolean };

/**
 * How long one segment works per invocation, and a job's end at most on removing dropped indexes' totals: well
 * inside the function's 5-minute timeout.
 */
export const SEGMENT_TURN_MS = 4 * 60_000;

/** The state machine's task: one step per invocation. */
export function indexJobTask(): (event: IndexJobEvent) => Promise<IndexJobResult> {
  let built: { jobs: IndexJobs; namespace: string } | undefined;
  const setup = () => {
    if (built) return built;
    const env = readIndexJobEnvironment();
    const sfn = stepFunctionsClient(env.tracing);
    const jobs = createIndexJobs(
      indexJobDocumentClient(env),
      { records: env.recordsTable, catalog: env.catalogTable },
      {
        writesPerSecond: env.writesPerSecond,
        concurrency: env.concurrency,
        maxSegments: env.maxSegments,
        recordsPerSegment: RECORDS_PER_SEGMENT,
        pageSize: INDEX_JOB_PAGE_SIZE,
        settleMs: CONFIGURATION_SETTLE_MS,
        // The lease's owner is an execution of this state machine: it works while the execution runs.
        isRunning: async (owner) => {
          try {
            const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: owner }));
            return execution.status === 'RUNNING';
          } catch (error) {
            if (error instanceof ExecutionDoesNotExist) return false;
            throw error;
          }
        },
      },
    );
    built = { jobs, namespace: env.metricNamespace };
    return built;
  };
  return async (event) => {
    const { jobs, namespace } = setup();
    const started = Date.now();
    const work: IndexJobWork = indexJobWorkOf(event.step);
    try {
      if (event.step === 'next') {
        const step = await jobs.next(event.owner);
        Object.assign(work, {
          decision: step.action,
          pending: step.pending,
          ...(step.action === 'scan' ? { jobId: step.jobId } : {}),
        });
        return step;
      }
      if (event.step === 'finish') {
        work.jobId = event.jobId;
        return await jobs.finish(event.jobId, SEGMENT_TURN_MS);
      }
      const { jobId, datasetCode, segment } = event;
      Object.assign(work, { jobId, datasetCode, segment });
      const run = await jobs.runSegment({ jobId, datasetCode, segment }, SEGMENT_TURN_MS);
      Object.assign(work, run.counts, {
        throttled: run.throttled,
        readUnits: run.meter.readUnits,
        writeUnits: run.meter.writeUnits,
      });
      return { done: run.done };
    } catch (error) {
      work.error = error instanceof Error ? `${error.name}: ${error.message}` : 'unknown';
      throw error;
    } finally {
      work.durationMs = Date.now() - started;
      logIndexJobWork(work, namespace);
    }
  };
}
