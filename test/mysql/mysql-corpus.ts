/**
 * `npm run test:mysql`: the compatibility corpus on a real server. Starts Debian's MariaDB (package
 * `mariadb-server`), loads the corpus's records, runs every query and compares each answer with the fixture the
 * embedded engine is tested against (test/fixtures/mysql-compat-answers.json): a query whose answer differs fails.
 * Where MariaDB and MySQL 8 differ, the corpus names the difference and says how MySQL 8's answer is obtained.
 *
 * `npx tsx test/mysql/mysql-corpus.ts --write` writes the fixture from the server's answers instead.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  type CorpusAnswer,
  type CorpusQuery,
  DATASETS,
  QUERIES,
  RECORDS,
  TIME_ZONE,
} from '../support/mysql-compat/corpus';
import { MariaDb, mariaDbInstalled, mysqlJsonText } from '../support/mysql-compat/mariadb';

const FIXTURE = path.join(__dirname, '../fixtures/mysql-compat-answers.json');

async function main(write: boolean): Promise<number> {
  if (!mariaDbInstalled()) {
    console.error('MariaDB is not installed: apt-get install mariadb-server (the CI script installs it).');
    return 1;
  }
  const server = await MariaDb.start(TIME_ZONE);
  const answers: Record<string, CorpusAnswer> = {};
  let failed = 0;
  try {
    await server.load(DATASETS, RECORDS);
    const fixture = write ? {} : (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, CorpusAnswer>);
    for (const query of QUERIES) {
      let answer: CorpusAnswer;
      try {
        answer = await answerOf(server, query);
      } catch (error) {
        console.log(`✕ ${query.name}: ${(error as Error).message}`);
        failed += 1;
        continue;
      }
      answers[query.name] = answer;
      if (write) continue;
      const expected = fixture[query.name];
      if (isDeepStrictEqual(expected, answer)) {
        console.log(`✓ ${query.name}${query.mysql8 ? ` (MySQL 8 differs from MariaDB: ${query.mysql8.why})` : ''}`);
      } else {
        failed += 1;
        console.log(`✕ ${query.name}\n  fixture: ${JSON.stringify(expected)}\n  server:  ${JSON.stringify(answer)}`);
      }
    }
  } finally {
    await server.stop();
  }
  if (write) {
    writeFileSync(FIXTURE, `${JSON.stringify(answers, null, 2)}\n`);
    // In the repository's format, so that a rewrite shows only the answers that changed.
    spawnSync(process.execPath, [require.resolve('@biomejs/biome/bin/biome'), 'format', '--write', FIXTURE], {
      stdio: 'ignore',
    });
    console.log(`wrote ${Object.keys(answers).length} answers to ${path.relative(process.cwd(), FIXTURE)}`);
  }
  console.log(`${QUERIES.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main(process.argv.includes('--write')).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

/**
 * MySQL 8's answer to a query, from MariaDB's: its rows (of the MySQL 8 form of the query, JSON re-printed as
 * MySQL 8 prints it), or MySQL 8's error where MariaDB fails with the same code, warns with the code the corpus
 * names, or answers a query MySQL 8 refuses (each named in the corpus). Throws when MariaDB does otherwise.
 */
async function answerOf(server: MariaDb, query: CorpusQuery): Promise<CorpusAnswer> {
  const expected = query.mysql8?.refused ?? query.mysql8?.error;
  const mysqlError = (): CorpusAnswer => {
    const { code, message } = expected as { code: number; message: string };
    return query.mysql8?.refused ? { refused: { code, message } } : { error: { code, message } };
  };
  let answer: { columns: string[]; rows: unknown[][] };
  try {
    answer = await server.run(query, query.mysql8?.sql ?? query.sql);
  } catch (error) {
    const code = (error as { errno?: number }).errno;
    if (expected?.mariadb === 'same code' && code === expected.code) return mysqlError();
    throw new Error(`the server refused it: ${(error as Error).message}`);
  }
  if (expected) {
    const mariadb = expected.mariadb;
    if (mariadb === 'answers') return mysqlError();
    if (typeof mariadb === 'object' && (await server.warningCodes()).includes(mariadb.warning)) return mysqlError();
    throw new Error(`the server answered it, where MySQL 8 fails with error ${expected.code}`);
  }
  for (const column of query.mysql8?.jsonColumns ?? []) {
    for (const row of answer.rows) row[column] = mysqlJsonText(row[column]);
  }
  return answer;
}
