/**
 * docs/interface.md §20: the mirror's statements as RDS Data API calls. `?` placeholders become named, typed
 * parameters (never inside strings, quoted names or comments), and JSON-formatted rows come back as objects.
 * The Data API is mocked at the SDK client here; test/integration/shared/mirror/data-api-*.test.ts run it
 * through the Data API twin over MariaDB.
 */
import { ExecuteStatementCommand, RDSDataClient } from '@aws-sdk/client-rds-data';
import { mockClient } from 'aws-sdk-client-mock';
import { dataApiSession, namedParameters } from '../../../../shared/mirror/data-api-session';

const rds = mockClient(RDSDataClient);
const target = {
  client: new RDSDataClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
  resourceArn: 'arn:aws:rds:eu-west-1:123456789012:cluster:mirror',
  secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:writer',
  database: 'das_mirror',
};

afterEach(() => rds.reset());

describe('the Data API session', () => {
  it('sends one ExecuteStatement with named, typed parameters and reads the rows as objects', async () => {
    rds.on(ExecuteStatementCommand).resolves({
      formattedRecords: '[{"id":"r1","n":2,"price":9.5,"note":null}]',
    });
    const rows = await dataApiSession(target).execute(
      'SELECT id, n, price, note FROM `things` WHERE a = ? AND n > ? AND price < ? AND ok = ? AND note <=> ? AND j = ?',
      ['x', 1, 9.75, true, null, { k: [1] }],
    );
    expect(rows).toEqual([{ id: 'r1', n: 2, price: 9.5, note: null }]);
    expect(rds.commandCalls(ExecuteStatementCommand).map((call) => call.args[0].input)).toEqual([
      {
        resourceArn: 'arn:aws:rds:eu-west-1:123456789012:cluster:mirror',
        secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:writer',
        database: 'das_mirror',
        sql: 'SELECT id, n, price, note FROM `things` WHERE a = :p1 AND n > :p2 AND price < :p3 AND ok = :p4 AND note <=> :p5 AND j = :p6',
        parameters: [
          { name: 'p1', value: { stringValue: 'x' } },
          { name: 'p2', value: { longValue: 1 } },
          { name: 'p3', value: { doubleValue: 9.75 } },
          { name: 'p4', value: { booleanValue: true } },
          { name: 'p5', value: { isNull: true } },
          { name: 'p6', value: { stringValue: '{"k":[1]}' } },
        ],
        formatRecordsAs: 'JSON',
        resultSetOptions: { decimalReturnType: 'DOUBLE_OR_LONG' },
      },
    ]);
  });

  it('answers no rows for a statement that returns none (a write), and sends no parameters when there are none', async () => {
    rds.on(ExecuteStatementCommand).resolves({ numberOfRecordsUpdated: 3 });
    expect(await dataApiSession(target).execute('DELETE FROM `things`')).toEqual([]);
    const [call] = rds.commandCalls(ExecuteStatementCommand);
    expect(call?.args[0].input.parameters).toBeUndefined();
    expect(call?.args[0].input.sql).toBe('DELETE FROM `things`');
  });

  it('passes the Data API error on as it came', async () => {
    rds.on(ExecuteStatementCommand).rejects(new Error("Table 'das_mirror.nope' doesn't exist"));
    await expect(dataApiSession(target).execute('SELECT 1 FROM nope')).rejects.toThrow(
      "Table 'das_mirror.nope' doesn't exist",
    );
  });
});

describe('named parameters', () => {
  it('leaves a ? in strings, quoted names and comments as text', () => {
    const sql = "SELECT '?', 'it''s ?', \"a\\\"?\", `c?l` /* ? */, x -- ?\n, ? # ?\n FROM t WHERE y = ? AND z = 'a?b'";
    expect(namedParameters(sql, [1, 'two'])).toEqual({
      sql: "SELECT '?', 'it''s ?', \"a\\\"?\", `c?l` /* ? */, x -- ?\n, :p1 # ?\n FROM t WHERE y = :p2 AND z = 'a?b'",
      parameters: [
        { name: 'p1', value: { longValue: 1 } },
        { name: 'p2', value: { stringValue: 'two' } },
      ],
    });
  });

  it('types large integers, byte strings and dates as the Data API takes them', () => {
    expect(
      namedParameters('VALUES (?, ?, ?, ?)', [
        2 ** 60,
        12345678901234567890n,
        Buffer.from('hi'),
        new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
      ]).parameters.map((parameter) => parameter.value),
    ).toEqual([
      { doubleValue: 2 ** 60 },
      { stringValue: '12345678901234567890' },
      { blobValue: Buffer.from('hi') },
      { stringValue: '2024-01-02 03:04:05.000' },
    ]);
  });

  it('refuses a statement whose placeholders and values differ in number', () => {
    expect(() => namedParameters('SELECT ? + ?', [1])).toThrow(
      'the statement has 2 placeholders but 1 values were given',
    );
  });
});
