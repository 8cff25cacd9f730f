/**
 * The `sql-scale` section of docs/performance.md: one row per size measured, each size's figures kept in the
 * section as a comment so that a run of one size leaves the others' rows in place.
 */
import type { Sample } from './sql-scale-progress';

export interface ScaleResult {
  records: number;
  loadSeconds: number;
  loadRate: number;
  loggedRateDuringLoad: number;
  applyRateDuringLoad: number;
  applyRatePeak: number;
  applyRateOverall: number;
  lagMaxSeconds: number;
  behindMaxRecords: number;
  atLoadEnd: { mirrored: number; logged: number; lagSeconds: number | null };
  caughtUpAfterLoadSeconds: number | null;
  /** Seconds after the load's end until the change log held every record (sampled). */
  loggedAfterLoadSeconds: number | null;
  trajectory: Sample[];
  first: {
    calls: number;
    firstCallMs: number;
    firstCall: string;
    answeredMs: number;
    readUnits: number;
    counted: number;
  };
  directFirstMs: number;
  serviceP50Ms: number;
  serviceMs: number[];
  mariadbP50Ms: number;
  mariadbMs: number[];
  roundP50Ms: number;
  readUnitsPerQuery: number;
  counted: number;
  directCounted: number;
  sameAsMariadb: boolean;
  groups: number;
  rssPeakMiB: number;
  rssEndMiB: number;
  mariadbPeakMiB: number;
  loadAverage: { start: number; end: number };
  cores: number;
  date: string;
}

const KEPT = /<!-- sql-scale:(\d+) (\{.*?\}) -->/g;
const POINTS = 8;

/** At most POINTS samples, evenly spread, the last one kept. */
function thinned(samples: Sample[]): Sample[] {
  if (samples.length <= POINTS) return samples;
  const step = (samples.length - 1) / (POINTS - 1);
  return Array.from({ length: POINTS }, (_, i) => samples[Math.round(i * step)] as Sample);
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const after = (seconds: number | null) => (seconds === null ? 'never' : `${seconds.toFixed(1)} s after the load`);
const yes = (met: boolean) => (met ? 'met' : '**not met**');

/** The sizes measured before, as the current document keeps them, with this run's in place of its own size. */
export function mergedResults(document: string, result: ScaleResult): ScaleResult[] {
  const kept = new Map<number, ScaleResult>();
  for (const match of document.matchAll(KEPT))
    kept.set(Number(match[1]), JSON.parse(match[2] as string) as ScaleResult);
  kept.set(result.records, { ...result, trajectory: thinned(result.trajectory) });
  return [...kept.values()].sort((a, b) => a.records - b.records);
}

function timeGoal(r: ScaleResult): { limit: number; met: boolean } {
  const limit = 1.5 * r.mariadbP50Ms + 200;
  return { limit, met: r.serviceP50Ms <= limit };
}

export function renderSection(document: string, result: ScaleResult): string {
  const results = mergedResults(document, result);
  const lines = [
    '### Custom SQL on MySQL at scale (`npm run bench -- sql-scale`)',
    '',
    'The local service as `npm start -- --sql-engine mysql://…` runs it, over a throw-away MariaDB 10.11 (its',
    'InnoDB buffer pool 32 MiB), loaded through batch-create (batches of 1,000, 4 at a time) into a dataset of five',
    "fields; then, right after the load's last answer and nothing waited for, the registered query",
    '`SELECT status, region, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY status, region ORDER BY status, region`',
    '(20 groups; `timeoutMs` 25,000) through the signed `/api/custom/executeSql` call, retried after `Retry-After`',
    `when it answers 2001; then 9 times more, each beside the same statement sent to MariaDB directly (mysql2, the`,
    "mirror's database, the query session's settings) on the same rows. `BENCH_SQL_SCALE_RECORDS` sets the size.",
    '',
    '**The load and the mirror.** Samples every 2 s (5 s past 200,000 records) of the records acknowledged, the',
    "change log's events, the mirror table's rows (`COUNT(*)`) and its lag as `das sql status` says it (seconds since",
    'the mirror last held every acknowledged write).',
    '',
    "| records | load | change log during the load | mirror applied during the load | mirror, peak over 10 s | largest lag during the load | most records behind | at the load's end: in the change log, mirrored, lag | change log held every record | mirror held every record |",
    '|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|',
    ...results.map(
      (r) =>
        `| ${int(r.records)} | ${r.loadSeconds.toFixed(0)} s, ${int(r.loadRate)}/s | ${int(r.loggedRateDuringLoad)}/s | ${int(r.applyRateDuringLoad)}/s | ${int(r.applyRatePeak)}/s | ${r.lagMaxSeconds.toFixed(1)} s | ${int(r.behindMaxRecords)} | ${int(r.atLoadEnd.logged)}, ${int(r.atLoadEnd.mirrored)}, ${r.atLoadEnd.lagSeconds === null ? '–' : `${r.atLoadEnd.lagSeconds.toFixed(1)} s`} | ${after(r.loggedAfterLoadSeconds)} | ${after(r.caughtUpAfterLoadSeconds)} |`,
    ),
    '',
    "**The query.** Milliseconds over HTTP for the service (signature, quota, the wait for the mirror's round that",
    "covers the call, the statement over the caller's view); MariaDB's own time for the statement as written.",
    'Read units from the request log.',
    '',
    '| records | first call right after the load | answered after | service p50 (9 calls) | MariaDB first, p50 | goal: ≤ 1.5 × MariaDB + 200 ms | a mirror round alone, p50 | read units per query (goal ≤ 2) | counted | same as MariaDB |',
    '|---:|---|---:|---:|---:|---|---:|---:|---:|---|',
    ...results.map((r) => {
      const goal = timeGoal(r);
      const first =
        r.first.firstCall === 'answered'
          ? `answered, ${int(r.first.firstCallMs)} ms`
          : `${r.first.firstCall.slice(0, 4)} after ${int(r.first.firstCallMs)} ms`;
      return `| ${int(r.records)} | ${first} | ${int(r.first.answeredMs)} ms (${r.first.calls} call${r.first.calls > 1 ? 's' : ''}) | ${int(r.serviceP50Ms)} ms | ${int(r.directFirstMs)} ms, ${int(r.mariadbP50Ms)} ms | ${yes(goal.met)} (${int(r.serviceP50Ms)} vs ${int(goal.limit)} ms; ${(r.serviceP50Ms / r.mariadbP50Ms).toFixed(2)}×) | ${int(r.roundP50Ms)} ms | ${r.readUnitsPerQuery} (${yes(r.readUnitsPerQuery <= 2)}) | ${int(r.counted)} of ${int(r.records)} | ${r.sameAsMariadb && r.counted === r.records && r.first.counted === r.records ? 'yes' : '**no**'} |`;
    }),
    '',
    "**Memory** (goal < 1 GiB): the resident set of the process that runs the service (with the bench's client,",
    "which holds one batch at a time), its peak and at the end; MariaDB's beside it.",
    '',
    '| records | service: peak | at the end | goal | MariaDB: peak |',
    '|---:|---:|---:|---|---:|',
    ...results.map(
      (r) =>
        `| ${int(r.records)} | ${int(r.rssPeakMiB)} MiB | ${int(r.rssEndMiB)} MiB | ${yes(r.rssPeakMiB < 1024)} | ${int(r.mariadbPeakMiB)} MiB |`,
    ),
    '',
    ...results.flatMap((r) => [
      `During the load of ${int(r.records)} (seconds from its start: acknowledged / in the change log / in the mirror, lag):`,
      `${r.trajectory
        .map(
          (s) =>
            `${(s.at / 1000).toFixed(0)} s: ${int(s.acknowledged)} / ${int(s.logged)} / ${int(s.mirrored)}, ${s.lagSeconds === null ? '–' : `${s.lagSeconds.toFixed(1)} s`}`,
        )
        .join('; ')}.`,
      '',
    ]),
    ...results.map(
      (r) =>
        `${int(r.records)}: measured ${r.date}, ${r.cores} cores shared with other work (load average ${r.loadAverage.start.toFixed(1)} at the start, ${r.loadAverage.end.toFixed(1)} at the end): compare the columns of a row with each other, not with other runs. Service calls ${r.serviceMs.map((ms) => int(ms)).join(', ')} ms; MariaDB ${r.mariadbMs.map((ms) => int(ms)).join(', ')} ms.`,
    ),
    '',
    ...results.map(
      (r) => `<!-- sql-scale:${r.records} ${JSON.stringify({ ...r, trajectory: thinned(r.trajectory) })} -->`,
    ),
  ];
  return lines.join('\n');
}
