/**
 * One JSON line per request (docs/interface.md §11): the request log and, in CloudWatch embedded metric format, the
 * metrics the dashboards read. One line serves both, so a request costs one write to the log stream (and one more
 * per hook run, for the per-function hook metrics). Keys, tokens, secrets and record contents never appear here.
 */
import type { HookRun } from './telemetry';

export interface RequestLogEntry {
  requestId: string;
  operation: string;
  appCode?: string | undefined;
  datasetCode?: string | undefined;
  /** How the caller authenticated: `signed` headers or a personal access key (`client`, docs/interface.md §14). */
  mode?: 'signed' | 'client' | undefined;
  /** The client-mode user; absent for signed requests. */
  userId?: string | undefined;
  errorCode?: number | undefined;
  durationMs: number;
  readUnits: number;
  writeUnits: number;
  /** Extra timing of an operation, e.g. `sqlDurationMs`; published as a metric too. */
  extraMetrics?: Record<string, number>;
  /** Log-only details, e.g. the cause of a 3001. Never caller data. */
  detail?: Record<string, string | number | boolean>;
  /** The hooks the request ran, in order: the line carries their total time and their names. */
  hookRuns?: readonly HookRun[];
}

/**
 * The dimension that carries the error code in the per-code metrics. EMF dimension values must be strings, so
 * it repeats `errorCode` (a number in the log line) as text. The dashboard reads this name.
 */
export const ERROR_CODE_DIMENSION = 'code';

/** The dimension that tells signed from client-key requests; the dashboard reads this name. */
export const MODE_DIMENSION = 'mode';

/**
 * The dimension of the per-function hook metrics: the configured function's name. Function names come from the
 * deployed configuration only (a request cannot add one), so the series stay as few as the configured functions.
 */
export const HOOK_FUNCTION_DIMENSION = 'hookFunction';

type LogSink = (line: string) => void;

let sink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

/** Send log lines elsewhere (the local server's `--quiet`, or a test that reads them). Returns the previous sink. */
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}

export function writeLogLine(record: Record<string, unknown>): void {
  sink(JSON.stringify(record));
}

/** Write the request's line: the fields of docs/interface.md §11 plus the `_aws` block that makes them metrics. */
export function logRequest(entry: RequestLogEntry, namespace: string, now = Date.now()): void {
  const metrics = [
    { Name: 'requests', Unit: 'Count' },
    { Name: 'errors', Unit: 'Count' },
    { Name: 'durationMs', Unit: 'Milliseconds' },
    { Name: 'readUnits', Unit: 'Count' },
    { Name: 'writeUnits', Unit: 'Count' },
  ];
  const timings = { ...entry.extraMetrics, ...hookTotals(entry.hookRuns ?? []) };
  metrics.push(...Object.keys(timings).map((name) => ({ Name: name, Unit: 'Milliseconds' })));
  const dimensions: string[][] = [['operation']];
  // Errors by operation and code, and by code alone: an alarm over every operation reads the code-only series, so
  // it stays within CloudWatch's 10 metrics per alarm however many operations there are.
  if (entry.errorCode !== undefined) dimensions.push(['operation', ERROR_CODE_DIMENSION], [ERROR_CODE_DIMENSION]);
  // Requests and errors per mode, so dashboards tell signed and client-key traffic apart.
  if (entry.mode !== undefined) dimensions.push([MODE_DIMENSION]);
  writeLogLine({
    _aws: { Timestamp: now, CloudWatchMetrics: [{ Namespace: namespace, Dimensions: dimensions, Metrics: metrics }] },
    level: entry.errorCode === 3001 ? 'ERROR' : 'INFO',
    requestId: entry.requestId,
    operation: entry.operation,
    appCode: entry.appCode,
    datasetCode: entry.datasetCode,
    [MODE_DIMENSION]: entry.mode,
    userId: entry.userId,
    errorCode: entry.errorCode,
    [ERROR_CODE_DIMENSION]: entry.errorCode === undefined ? undefined : String(entry.errorCode),
    durationMs: entry.durationMs,
    readUnits: round(entry.readUnits),
    writeUnits: round(entry.writeUnits),
    requests: 1,
    errors: entry.errorCode === undefined ? 0 : 1,
    ...timings,
    hookFunctions: entry.hookRuns?.length ? entry.hookRuns.map((run) => run.functionName).join(',') : undefined,
    ...entry.detail,
  });
}

/**
 * The request's time in hooks, all runs together (a request may run a before and several after hooks); each run's
 * own time is on its own line (`logHookRuns`).
 */
function hookTotals(runs: readonly HookRun[]): Record<string, number> {
  if (runs.length === 0) return {};
  return { hookDurationMs: round(runs.reduce((total, run) => total + run.durationMs, 0)) };
}

/**
 * One line per hook run, beside the request's line: `hookDurationMs` and `hookFailures` (0 or 1) by function.
 * A request may run several functions, and a line carries one value per dimension, so each run has its own line
 * (only requests that run hooks write them). The only dimension is the function's configured name.
 */
export function logHookRuns(
  request: { requestId: string; operation: string },
  runs: readonly HookRun[],
  namespace: string,
  now = Date.now(),
): void {
  for (const run of runs) {
    writeLogLine({
      _aws: {
        Timestamp: now,
        CloudWatchMetrics: [
          {
            Namespace: namespace,
            Dimensions: [[HOOK_FUNCTION_DIMENSION]],
            Metrics: [
              { Name: 'hookDurationMs', Unit: 'Milliseconds' },
              { Name: 'hookFailures', Unit: 'Count' },
            ],
          },
        ],
      },
      level: 'INFO',
      requestId: request.requestId,
      operation: request.operation,
      [HOOK_FUNCTION_DIMENSION]: run.functionName,
      hookNode: run.node,
      hookDurationMs: round(run.durationMs),
      hookFailures: run.failed ? 1 : 0,
    });
  }
}

/** What one step of an index job did (shared/indexing/index-jobs.ts), for its log line and metrics. */
export interface IndexJobWork {
  step: 'next' | 'segment' | 'finish';
  /** `next`: what it decided (scan, wait, done). */
  decision?: string;
  jobId?: string;
  datasetCode?: string;
  segment?: number;
  /** Records read, records whose index keys were written, writes redone because the record had changed. */
  records: number;
  written: number;
  conflicts: number;
  /** Writes DynamoDB throttled (the segment slowed down). */
  throttled: number;
  readUnits: number;
  writeUnits: number;
  durationMs: number;
  /** The step failed: its error's name and message (never record contents). */
  error?: string;
  /** `next`: indexes not complete yet (building, waiting or being dropped), all datasets together. */
  pending?: number;
}

/** A step's record before it has done anything: every count at zero. */
export function indexJobWorkOf(step: IndexJobWork['step']): IndexJobWork {
  return { step, records: 0, written: 0, conflicts: 0, throttled: 0, readUnits: 0, writeUnits: 0, durationMs: 0 };
}

/** The metrics an index job step publishes (`logIndexJobWork`); the dashboard and the alarms read these names. */
export const INDEX_BUILD_METRICS = {
  records: 'indexBuildRecords',
  writes: 'indexBuildWrites',
  conflicts: 'indexBuildConflicts',
  throttles: 'indexBuildThrottles',
  errors: 'indexBuildErrors',
  pending: 'indexBuildPending',
} as const;

/**
 * One line per index job step, in embedded metric format without dimensions: records read, index keys written,
 * writes redone, writes DynamoDB throttled, errors (0 or 1), and after each `next` the indexes still pending. The
 * dashboard draws records done and their rate from them, and an alarm fires when pending work stops progressing.
 */
export function logIndexJobWork(work: IndexJobWork, namespace: string, now = Date.now()): void {
  const metrics: string[] = [
    INDEX_BUILD_METRICS.records,
    INDEX_BUILD_METRICS.writes,
    INDEX_BUILD_METRICS.conflicts,
    INDEX_BUILD_METRICS.throttles,
    INDEX_BUILD_METRICS.errors,
  ];
  if (work.pending !== undefined) metrics.push(INDEX_BUILD_METRICS.pending);
  writeLogLine({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        { Namespace: namespace, Dimensions: [[]], Metrics: metrics.map((Name) => ({ Name, Unit: 'Count' })) },
      ],
    },
    level: work.error ? 'ERROR' : 'INFO',
    operation: 'index-job',
    step: work.step,
    decision: work.decision,
    jobId: work.jobId,
    datasetCode: work.datasetCode,
    segment: work.segment,
    durationMs: round(work.durationMs),
    readUnits: round(work.readUnits),
    writeUnits: round(work.writeUnits),
    indexBuildRecords: work.records,
    indexBuildWrites: work.written,
    indexBuildConflicts: work.conflicts,
    indexBuildThrottles: work.throttled,
    indexBuildErrors: work.error ? 1 : 0,
    indexBuildPending: work.pending,
    errorMessage: work.error,
  });
}

function round(units: number): number {
  return Math.round(units * 100) / 100;
}
