/**
 * Related conditions and sorts past the read budget on the mysql engine (docs/interface.md §21, §20): the local
 * service over MariaDB (the local twin of MySQL 8), with ORDERS orders linked to CUSTOMERS customers
 * (test/fixtures/relations-config.json). Side by side in one run: a condition matching most customers with a sort
 * by a related field (past the budget: one statement on MariaDB, then the page's reads), the same on a deep page,
 * and a list the join in memory serves (a condition on the orders narrows it to fewer than 1,000). Latency is the
 * median over RUNS requests over HTTP; read units are the request log's.
 *
 * Run: npm run bench -- relations-mysql (sizes: BENCH_RELATIONS_ORDERS, default 20000; customers a quarter of it)
 */
import { loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MariaDb } from '../test/support/mysql-compat/mariadb';
import { FIXTURES_DIR } from '../test/support/paths';
import { ServiceHarness } from '../test/support/service-harness';
import { writeSection } from './report';

const ORDERS = Number(process.env.BENCH_RELATIONS_ORDERS ?? 20_000);
const CUSTOMERS = Math.max(1, Math.floor(ORDERS / 4));
const RUNS = 15;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function load(harness: ServiceHarness): Promise<void> {
  const customerIds: string[] = [];
  for (let start = 0; start < CUSTOMERS; start += 1000) {
    const chunk = Array.from({ length: Math.min(1000, CUSTOMERS - start) }, (_, k) => {
      const i = start + k;
      return { name: `C${String(i).padStart(6, '0')}`, tier: i % 10 === 0 ? 'silver' : 'gold', region: 'north' };
    });
    const created = await harness.batchCreate('customers', chunk);
    if (!created.body.success) throw new Error(JSON.stringify(created.body));
    customerIds.push(...created.body.data);
  }
  for (let start = 0; start < ORDERS; start += 1000) {
    const chunk = Array.from({ length: Math.min(1000, ORDERS - start) }, (_, k) => {
      const i = start + k;
      return { item: `o${i}`, amount: i % 100, customer_id: customerIds[i % customerIds.length] };
    });
    const created = await harness.batchCreate('orders', chunk);
    if (!created.body.success) throw new Error(JSON.stringify(created.body));
  }
}

async function measure(harness: ServiceHarness, paramMap: Record<string, unknown>) {
  const times: number[] = [];
  let units = 0;
  let total = 0;
  for (let i = 0; i < RUNS; i++) {
    const begun = performance.now();
    const res = await harness.getList('orders', paramMap);
    times.push(performance.now() - begun);
    if (!res.body.success) {
      throw new Error(
        `${JSON.stringify(paramMap)}: ${JSON.stringify(res.body)} ${JSON.stringify(harness.logLines.at(-1))}`,
      );
    }
    total = res.body.data.paging.totalCount;
    units = Number(harness.logLines.at(-1)?.readUnits ?? 0);
  }
  return { ms: median(times), units, total };
}

export async function run(): Promise<void> {
  const mariadb = await MariaDb.start('UTC');
  const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'), {
    sources: true,
    sqlEngine: mariadb.engineUrl('mirror'),
  });
  await harness.start();
  try {
    const loadBegun = performance.now();
    await load(harness);
    const loadMs = performance.now() - loadBegun;
    const gold = { where: { 'customer.tier': 'gold' }, orderBy: [{ 'customer.name': 'desc' }] };
    const select = ['item', 'customer.name'];
    const caughtUpBegun = performance.now();
    // The mirror copies a new dataset at its backfill's pace: lists answer 2001 until it holds the load.
    while (!(await harness.getList('orders', { ...gold, select, pageSize: 20 })).body.success) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const caughtUpMs = performance.now() - caughtUpBegun;
    const cases: [string, Record<string, unknown>][] = [
      [
        '`customer.tier` gold (90% of customers), sort `customer.name`, page 1 of 20: on MariaDB',
        { ...gold, select, pageSize: 20 },
      ],
      ['the same, page 500', { ...gold, select, pageSize: 20, currentPage: 500 }],
      ['the same without `select` of the related field', { ...gold, pageSize: 20 }],
      [
        'the same narrowed by `amount: 7` (1% of orders): the join in memory',
        { ...gold, where: { ...gold.where, amount: 7 }, select, pageSize: 20 },
      ],
    ];
    const rows: string[] = [];
    for (const [name, paramMap] of cases) {
      const figures = await measure(harness, paramMap);
      rows.push(`| ${name} | ${figures.total} | ${figures.ms.toFixed(1)} | ${figures.units} |`);
    }
    const markdown = [
      '### Past the read budget, on MySQL (`npm run bench -- relations-mysql`)',
      '',
      `${ORDERS.toLocaleString('en-US')} orders, ${CUSTOMERS.toLocaleString('en-US')} customers; loaded in ` +
        `${(loadMs / 1000).toFixed(1)} s; the mirror held it ${(caughtUpMs / 1000).toFixed(1)} s after.`,
      '',
      '| List | totalCount | median ms | read units |',
      '|---|---|---|---|',
      ...rows,
      '',
      `On a machine shared with other work (load average ${loadavg()[0]?.toFixed(1)} at the end of the run): compare the rows with each other, not with other runs.`,
    ].join('\n');
    process.stdout.write(`${markdown}\n`);
    writeSection('relations-mysql', markdown);
  } finally {
    await harness.stop();
    await mariadb.stop();
  }
}
