/**
 * The engine inside a single-file esbuild bundle, as the Lambda function ships it: the bundle is run with plain
 * `node` from a directory without node_modules, with only the files of SQL_BUNDLE_ASSETS copied beside it.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { SQL_BUNDLE_ASSETS, sqlBundleAssetSources } from '../../../../shared/sql/bundle-assets';
import { REPO_ROOT } from '../../../support/paths';

const run = promisify(execFile);
const root = REPO_ROOT;

const entry = `
import { locateSqlAssets } from ${JSON.stringify(path.join(root, 'shared/sql/bundle-assets'))};
import { SqlJsEngine } from ${JSON.stringify(path.join(root, 'shared/sql/sqljs-engine'))};

async function main() {
  const engine = new SqlJsEngine();
  const tables = [{
    name: 'orders',
    key: 'orders@1',
    columns: [{ name: 'id', type: 'ANY' as const }, { name: 'region', type: 'TEXT' as const }, { name: 'amount', type: 'REAL' as const }],
    rows: [['o1', 'EU', 10], ['o2', 'US', 20], ['o3', 'EU', 5]],
  }];
  const grouped = await engine.run({
    tables,
    sql: 'SELECT region, sum(amount) AS total FROM orders WHERE amount > #{min} GROUP BY region ORDER BY region',
    params: { min: 1 },
    timeoutMs: 5000,
  });
  const runaway = await engine
    .run({ tables, sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', params: {}, timeoutMs: 200 })
    .then(() => 'finished', (e: { code?: number }) => e.code);
  const after = await engine.run({ tables, sql: 'SELECT count(*) AS n FROM orders', params: {}, timeoutMs: 5000 });
  const assets = locateSqlAssets();
  console.log(JSON.stringify({
    grouped: grouped.rows,
    runaway,
    after: after.rows,
    workersStarted: engine.workersStarted,
    assetDirs: [...new Set(Object.values(assets).map((p) => require('node:path').dirname(p)))],
  }));
  await engine.close();
}
main().catch((error) => { console.error(error); process.exit(1); });
`;

describe('the SQL engine in a single-file bundle', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sql-bundle-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs queries with only the listed assets beside the bundle and no node_modules', async () => {
    const entryFile = path.join(dir, 'entry.ts');
    const outDir = path.join(dir, 'out');
    writeFileSync(entryFile, entry);
    await build({
      entryPoints: [entryFile],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile: path.join(outDir, 'index.js'),
      logLevel: 'silent',
    });
    for (const { fileName, sourcePath } of sqlBundleAssetSources()) {
      copyFileSync(sourcePath, path.join(outDir, fileName));
    }
    expect(sqlBundleAssetSources().map((a) => a.fileName)).toEqual([...SQL_BUNDLE_ASSETS]);
    // sql.js itself is not in the bundle: only the worker loads it, from the copied file.
    expect(readFileSync(path.join(outDir, 'index.js'), 'utf8')).not.toContain('initSqlJs');

    const { stdout } = await run(process.execPath, [path.join(outDir, 'index.js')], {
      cwd: outDir,
      env: { PATH: process.env.PATH ?? '' },
      timeout: 20_000,
    });
    expect(JSON.parse(stdout)).toEqual({
      grouped: [
        { region: 'EU', total: 15 },
        { region: 'US', total: 20 },
      ],
      runaway: 2001,
      after: [{ n: 3 }],
      workersStarted: 2,
      assetDirs: [outDir],
    });
  });

  it('bundles the execute-sql handler itself, which loads from the bundle directory', async () => {
    const outDir = path.join(dir, 'handler');
    await build({
      entryPoints: [path.join(root, 'functions/execute-sql.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile: path.join(outDir, 'index.js'),
      logLevel: 'silent',
    });
    for (const { fileName, sourcePath } of sqlBundleAssetSources()) {
      copyFileSync(sourcePath, path.join(outDir, fileName));
    }
    const { stdout } = await run(
      process.execPath,
      ['-e', "process.stdout.write(typeof require('./index.js').handler)"],
      { cwd: outDir, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 },
    );
    expect(stdout).toBe('function');
  });
});
