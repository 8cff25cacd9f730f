/**
 * Custom SQL when a dataset's load outlives the query's time limit (docs/interface.md §20): the aggregate of
 * `npm run bench -- sql` with the default limit (5 s) over records read from the records table (dynalite), as a
 * fresh container runs it. Three ways, side by side in one run:
 * - "one call with time enough": the reference, a single cold load (limit 180 s, run last);
 * - "background": the service as it is: a call that cannot finish answers 2001 with Retry-After and the progress,
 *   the load goes on, and the caller retries after Retry-After until the answer;
 * - "stopped at the limit": a cache whose load stops with the query (its background limit set to the query's),
 *   as loads did before: every call answers 2001 and what it read is thrown away.
 *
 * Run: npm run bench -- sql-retry (BENCH_SQL_RETRY_SIZE, default 100000)
 */
import { performance } from 'node:perf_hooks';
import { ulid } from 'ulid';
import { startEmbeddedDynamo } from '../bin/local/embedded-dynamo';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { Catalog, toDataset } from '../shared/catalog/catalog';
import { QueryTimeoutError } from '../shared/contract/errors';
import { CapacityMeter } from '../shared/observability/capacity-meter';
import { DatasetCache } from '../shared/sql/dataset-cache';
import { RecordStoreRowSource } from '../shared/sql/record-store-row-source';
import { SqlJsEngine } from '../shared/sql/sqljs-engine';
import { DatasetBookkeeping } from '../shared/storage/dataset-bookkeeping';
import { ListReader } from '../shared/storage/list-reader';
import { ensureTables, localTableNames } from '../shared/storage/table-setup';
import { writeSection } from './report';
import { fields, loadBulk, rendered, syntheticOrders } from './sql';

const LIMIT_MS = 5_000;
const MAX_CALLS = 40;
const STOPPED_CALLS = 3;
const REFERENCE_LIMIT_MS = 180_000;

interface Call {
  units: number;
  ms: number;
  answer: string;
  retryAfter?: number;
}

export async function run(): Promise<void> {
  const size = Number(process.env.BENCH_SQL_RETRY_SIZE ?? 100_000);
  const dynamo = await startEmbeddedDynamo();
  const names = localTableNames('bench-sql-retry');
  await ensureTables(dynamo.client, names);
  const doc = createDocumentClient(dynamo.client);
  const table = names.Records as string;
  const reader = new ListReader(doc, table);
  const bookkeeping = new DatasetBookkeeping(doc, table);
  const datasetCode = 'orders';
  const config = { appCode: 'bench', datasetCode, fields };
  const catalog = new Catalog({ applications: [], datasets: [config] });
  const started = Date.now() - 3_600_000;
  const records = syntheticOrders(size).map((record, i) => ({ ...record, id: ulid(started + i) }));
  await loadBulk(doc, bookkeeping, table, toDataset(config), records, started + size);
  const engine = new SqlJsEngine({ loadTimeoutMs: LIMIT_MS });
  await engine.warm();
  const view = { datasetCode, fields };
  const sql = rendered(datasetCode);
  const params = { minAmount: 100, paid: true };

  /** One call as execute-sql makes it: the load within `limitMs`, then the statement. */
  const call = async (cache: DatasetCache, limitMs: number): Promise<Call> => {
    const meter = new CapacityMeter();
    const from = performance.now();
    const message = `the load did not finish within ${limitMs} ms`;
    try {
      const tables = await cache.tables([view], new RecordStoreRowSource(reader, bookkeeping, catalog, meter), {
        loadLimit: { ms: limitMs, message },
      });
      await engine.run({ tables, sql, params, timeoutMs: 20_000 });
      return { units: meter.readUnits, ms: performance.now() - from, answer: 'rows' };
    } catch (error) {
      if (!(error instanceof QueryTimeoutError)) throw error;
      return {
        units: meter.readUnits,
        ms: performance.now() - from,
        answer: `2001: ${error.message}`,
        ...(error.retryAfterSeconds === undefined ? {} : { retryAfter: error.retryAfterSeconds }),
      };
    }
  };

  try {
    const background = new DatasetCache();
    const calls: Call[] = [];
    const from = performance.now();
    for (let i = 0; i < MAX_CALLS; i += 1) {
      const made = await call(background, LIMIT_MS);
      calls.push(made);
      if (made.answer === 'rows') break;
      await new Promise((resolve) => setTimeout(resolve, 1_000 * (made.retryAfter ?? 1)));
    }
    const answeredAfter = performance.now() - from;

    // Loads stopped with the query, as before: each call's read ends at its limit and is thrown away.
    const stoppedCache = new DatasetCache({ backgroundLimitMs: LIMIT_MS });
    const stopped: Call[] = [];
    for (let i = 0; i < STOPPED_CALLS; i += 1) stopped.push(await call(stoppedCache, LIMIT_MS));

    // The reference last, so that no load of it runs beside the others: time enough for any machine.
    const single = await call(new DatasetCache(), REFERENCE_LIMIT_MS);

    const sum = (list: Call[]) => list.reduce((total, c) => total + c.units, 0);
    const fmt = (units: number) => String(Math.round(units * 10) / 10);
    const answered = calls.at(-1)?.answer === 'rows';
    const section = [
      '## Custom SQL: a load longer than the query’s limit goes on in the background',
      '',
      `Measured by \`npm run bench -- sql-retry\` (\`BENCH_SQL_RETRY_SIZE\`): the aggregate above over ${size.toLocaleString('en-US')}`,
      `records read from the records table (dynalite), the query's default limit (${LIMIT_MS / 1000} s), on a shared development`,
      'machine, the three in one run. "Background" is the service as it is: a call whose load cannot finish within',
      'the limit answers 2001 with `Retry-After` and the progress, the load goes on, and the caller retries after',
      '`Retry-After`; "stopped at the limit" is how loads ran before: stopped with the query, every call 2001 and',
      'its reads thrown away (a cache whose background limit is the query’s). Loading the rows into the SQL worker',
      'goes on the same way when it outlives its own limit (5 s): the retry finds them loaded.',
      '',
      '| way | calls | answered | read units in all | read units per call | seconds to the answer |',
      '|---|---:|---|---:|---|---:|',
      `| one call with time enough (180 s) | 1 | ${single.answer === 'rows' ? 'yes' : 'no'} | ${fmt(single.units)} | ${fmt(single.units)} | ${(single.ms / 1000).toFixed(1)} |`,
      `| background, retried after \`Retry-After\` | ${calls.length} | ${answered ? 'yes' : 'no'} | ${fmt(sum(calls))} | ${calls.map((c) => fmt(c.units)).join(', ')} | ${answered ? (answeredAfter / 1000).toFixed(1) : '–'} |`,
      `| stopped at the limit (before) | ${stopped.length} | ${stopped.some((c) => c.answer === 'rows') ? 'yes' : 'no'} | ${fmt(sum(stopped))} | ${stopped.map((c) => fmt(c.units)).join(', ')} | never |`,
      '',
      `The first call answered: "${calls[0]?.answer.replace(/^2001: /, '') ?? ''}" (\`Retry-After: ${calls[0]?.retryAfter ?? '–'}\`);`,
      `then, call by call: ${calls
        .slice(1)
        .map((c) => (c.answer === 'rows' ? 'the answer' : `2001, \`Retry-After: ${c.retryAfter ?? '–'}\``))
        .join('; ')}.`,
      'A retry reads nothing again: each call is charged the units the load read since the call before, so the',
      'calls together pay about one load (and each a unit or two of its own: the dataset’s count, the recent changes).',
    ].join('\n');
    console.log(section);
    writeSection('sql-retry', section);
  } finally {
    await engine.close();
    await dynamo.close();
  }
}
