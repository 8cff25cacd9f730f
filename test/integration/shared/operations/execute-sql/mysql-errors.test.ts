/**
 * docs/interface.md §20 over HTTP: the embedded engine fails where MySQL 8 fails while a statement runs, with
 * MySQL's number and words (`execSuccess: false`, `MySQL error <number>: <message>`), and answers as before where
 * MySQL answers: a scalar subquery of two rows (1242), JSON text that is not JSON given to a JSON function (3141,
 * saying why and at which byte: `not json` is read as far as `n`, RapidJSON's offset, as MySQL 8 reports it), a JSON
 * function given a number (3146), a JSON path bound as a parameter that MySQL cannot
 * read (3143).
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const APP: AppCredentials = {
  appCode: 'app-mysql-errors',
  accessKey: 'ak-mysql-errors-0001',
  secret: 'sk-mysql-errors',
};

const query = (sqlCode: string, sql: string, params?: Record<string, { type: string; required: boolean }>) => ({
  appCode: APP.appCode,
  sqlCode,
  sql,
  ...(params ? { params } : {}),
});

const config = {
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      grants: [{ datasetCode: 'orders', operations: ['read', 'create'] }],
    },
  ],
  datasets: [
    {
      appCode: APP.appCode,
      datasetCode: 'orders',
      fields: [
        { name: 'customer', type: 'string' },
        { name: 'amount', type: 'integer' },
        { name: 'note', type: 'string' },
        { name: 'meta', type: 'json' },
      ],
    },
  ],
  queries: [
    query('first-id', 'SELECT (SELECT id FROM orders) AS x'),
    query('top-amount', 'SELECT (SELECT MAX(amount) FROM orders) AS top, (SELECT amount FROM orders LIMIT 1) AS one'),
    query(
      'amount-of',
      'SELECT customer FROM orders WHERE amount = (SELECT amount FROM orders WHERE customer = #{who}) ORDER BY customer',
      { who: { type: 'string', required: true } },
    ),
    query(
      'own-amount',
      'SELECT o.customer, (SELECT p.amount FROM orders p WHERE p.id = o.id) AS amount FROM orders o ORDER BY o.customer',
    ),
    query('note-field', "SELECT JSON_EXTRACT(note, '$.a') AS a FROM orders WHERE customer = #{who}", {
      who: { type: 'string', required: true },
    }),
    query('note-as-is', 'SELECT JSON_UNQUOTE(note) AS n FROM orders WHERE customer = #{who}', {
      who: { type: 'string', required: true },
    }),
    query('amount-as-json', "SELECT JSON_EXTRACT(amount, '$') AS a FROM orders"),
    query('meta-at', 'SELECT JSON_EXTRACT(meta, #{path}) AS v FROM orders WHERE customer = #{who}', {
      path: { type: 'string', required: true },
      who: { type: 'string', required: true },
    }),
  ],
};

const configFile = path.join(os.tmpdir(), `sql-mysql-errors-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(config));
const harness = new ServiceHarness(configFile);

function executeSql(sqlCode: string, params?: Record<string, unknown>) {
  return harness.call(
    '/api/custom/executeSql',
    { sqlCode, ...(params ? { params } : {}) },
    { app: APP, datasetCode: null },
  );
}

/** The answer of a statement MySQL 8 fails, inside a successful envelope. */
function failed(execError: string) {
  return { success: true, msg: null, data: { execSuccess: false, execError } };
}

beforeAll(async () => {
  await harness.start();
  const records = [
    { customer: 'Ann', amount: 10, note: 'not json', meta: { a: 1 } },
    { customer: 'Bob', amount: 20, note: '{"a": 1', meta: { a: 2 } },
    { customer: 'Cy', amount: 30, note: '"Cy\\x"', meta: { a: 3 } },
  ];
  for (const record of records) expect((await harness.create('orders', record, { app: APP })).body.success).toBe(true);
});
afterAll(async () => {
  await harness.stop();
  rmSync(configFile, { force: true });
});

describe('a scalar subquery', () => {
  it('of more than one row fails with MySQL error 1242, where SQLite would answer the first row', async () => {
    const res = await executeSql('first-id');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(failed('MySQL error 1242: Subquery returns more than 1 row'));
  });

  it('of one row answers it, with its type', async () => {
    expect((await executeSql('top-amount')).body.data).toEqual({
      execSuccess: true,
      execResult: [{ top: 30, one: 10 }],
    });
    expect((await executeSql('own-amount')).body.data).toEqual({
      execSuccess: true,
      execResult: [
        { customer: 'Ann', amount: 10 },
        { customer: 'Bob', amount: 20 },
        { customer: 'Cy', amount: 30 },
      ],
    });
    expect((await executeSql('amount-of', { who: 'Bob' })).body.data).toEqual({
      execSuccess: true,
      execResult: [{ customer: 'Bob' }],
    });
  });

  it('of no row is NULL', async () => {
    expect((await executeSql('amount-of', { who: 'Nobody' })).body.data).toEqual({
      execSuccess: true,
      execResult: [],
    });
  });
});

describe('a JSON function', () => {
  it('given text that is not JSON fails with MySQL error 3141, saying why and at which byte', async () => {
    expect((await executeSql('note-field', { who: 'Ann' })).body).toEqual(
      failed(
        'MySQL error 3141: Invalid JSON text in argument 1 to function json_extract: "Invalid value." at position 1.',
      ),
    );
    expect((await executeSql('note-field', { who: 'Bob' })).body).toEqual(
      failed(
        'MySQL error 3141: Invalid JSON text in argument 1 to function json_extract: "Missing a comma or \'}\' after an object member." at position 7.',
      ),
    );
  });

  it('JSON_UNQUOTE answers unquoted text as it is, and fails on a quoted text that is not a JSON string', async () => {
    expect((await executeSql('note-as-is', { who: 'Ann' })).body.data).toEqual({
      execSuccess: true,
      execResult: [{ n: 'not json' }],
    });
    expect((await executeSql('note-as-is', { who: 'Bob' })).body.data).toEqual({
      execSuccess: true,
      execResult: [{ n: '{"a": 1' }],
    });
    expect((await executeSql('note-as-is', { who: 'Cy' })).body).toEqual(
      failed(
        'MySQL error 3141: Invalid JSON text in argument 1 to function json_unquote: "Invalid escape character in string." at position 3.',
      ),
    );
  });

  it('given a number fails with MySQL error 3146', async () => {
    expect((await executeSql('amount-as-json')).body).toEqual(
      failed(
        'MySQL error 3146: Invalid data type for JSON data in argument 1 to function json_extract; a JSON string or JSON type is required.',
      ),
    );
  });

  it('given a JSON path parameter MySQL cannot read fails with MySQL error 3143; a good one answers', async () => {
    expect((await executeSql('meta-at', { path: 'a', who: 'Ann' })).body).toEqual(
      failed('MySQL error 3143: Invalid JSON path expression. The error is around character position 1.'),
    );
    expect((await executeSql('meta-at', { path: '$.a', who: 'Ann' })).body.data).toEqual({
      execSuccess: true,
      execResult: [{ v: '1' }],
    });
  });
});
