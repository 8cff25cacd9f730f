/**
 * Property (docs/interface.md §2, §7): a well-formed request never ends in 3001 and never leaves the envelope, however
 * hostile its content. Signed, correctly addressed requests of every operation carry generated parameters:
 * extreme numbers, unicode and control characters, nested and empty `$and`/`$or`, long lists, every suffix
 * and every `where` operator on every field type, hidden fields and made-up ones. Every answer must be the
 * envelope with a code of the contract and the HTTP status that matches it, with an `X-Request-Id`, and never 3001.
 *
 * Case counts per run (fixed seeds): get-list 900, create 300, update 300, get-one 200, custom SQL 300 —
 * 2,000 requests in all. Values are mostly ones the field accepts, at its edges (so that requests get past
 * validation and reach the store), and about one in thirteen past them; field names are the dataset's, the
 * system fields, a hidden one and, now and then, made-up ones (`__proto__` included).
 *
 * Then requests no client would send, written out: JSON nested 1,000, 10,000 and 100,000 levels deep in every
 * place of every operation's body (a field, a filter, an id, a list create ignores, a key no operation reads), with
 * and without an `Idempotency-Key`, on a dataset without hooks and on one whose every operation has a `before` and
 * an `after` hook; prototype names (`__proto__`, `constructor`, `prototype`) as header names, body keys, codes and
 * path segments; and the local server's own refusals. Every answer is the envelope with its exact code and message,
 * and carries `X-Request-Id`.
 *
 * The functions run from source also when the suite runs against the synthesized bundles: a bundle carries the
 * hook sandbox only where the deployed configuration hooks its operation, and this one hooks every operation.
 */
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { signRequest } from '../../../../../packages/client/src/signature';
import { failureWith } from '../../../../support/failure-envelope';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const HIGH_QUOTA = { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, concurrent: 100 };
const FULL: AppCredentials = { appCode: 'app-fuzz', accessKey: 'ak-fuzz-full-0001', secret: 'sk-fuzz-full' };
const SCOPED: AppCredentials = { appCode: 'app-fuzz-scoped', accessKey: 'ak-fuzz-scoped-01', secret: 'sk-fuzz-sc' };

const FIELDS = [
  { name: 's', type: 'string', indexed: true },
  { name: 't', type: 'text' },
  { name: 'i', type: 'integer', indexed: true },
  { name: 'n', type: 'number', indexed: true },
  { name: 'u', type: 'number' },
  { name: 'b', type: 'boolean' },
  { name: 'd', type: 'date', indexed: true },
  { name: 'dt', type: 'datetime' },
  { name: 'e', type: 'enum', options: ['x', 'y', 'z'], indexed: true },
  { name: 'j', type: 'json' },
  { name: 'region', type: 'string' },
  { name: 'secret', type: 'string' },
] as const;
const FIELD_NAMES = FIELDS.map((f) => f.name);
/** A personal access key of the full application's user, for the `/client/` paths. */
const USER_KEY = 'dasu_hostile-requests-user-key-00000000';

const CONFIG = {
  applications: [
    {
      appCode: FULL.appCode,
      accessKey: FULL.accessKey,
      signingSecret: FULL.secret,
      quota: HIGH_QUOTA,
      grants: [
        { datasetCode: 'things', operations: ['read', 'create', 'update'] },
        { datasetCode: 'hooked', operations: ['read', 'create', 'update'] },
      ],
      users: [
        {
          userId: 'fuzzer',
          userName: 'Fuzzer',
          loginName: 'fuzzer@example.com',
          keyHashes: [createHash('sha256').update(USER_KEY).digest('hex')],
        },
      ],
    },
    {
      appCode: SCOPED.appCode,
      accessKey: SCOPED.accessKey,
      signingSecret: SCOPED.secret,
      quota: HIGH_QUOTA,
      grants: [
        {
          datasetCode: 'things',
          operations: ['read', 'create', 'update'],
          readFields: ['s', 't', 'i', 'n', 'u', 'b', 'd', 'dt', 'e', 'j', 'region'],
          writeFields: ['s', 'i', 'n', 'region'],
          rowFilter: { region: 'EU' },
        },
      ],
    },
  ],
  datasets: [
    { appCode: FULL.appCode, datasetCode: 'things', fields: FIELDS },
    { appCode: FULL.appCode, datasetCode: 'hooked', fields: FIELDS },
  ],
  // Every operation of `hooked` runs a function before and after it, which passes its input through.
  functions: [{ appCode: FULL.appCode, name: 'pass', source: 'export default async function pass(p) { return p; }' }],
  hooks: ['get-list', 'get-one', 'create', 'batch-create', 'update'].flatMap((operation) => [
    { datasetCode: 'hooked', operation, node: 'before', function: 'pass' },
    { datasetCode: 'hooked', operation, node: 'after', function: 'pass' },
  ]),
  queries: [
    {
      appCode: FULL.appCode,
      sqlCode: 'fuzz-sum',
      sql: 'SELECT count(*) AS c, sum(n) AS total FROM things WHERE n >= #{min} AND (#{pattern} IS NULL OR s LIKE #{pattern})',
      params: { min: { type: 'number', required: true }, pattern: { type: 'string' } },
    },
    {
      appCode: SCOPED.appCode,
      sqlCode: 'fuzz-scoped',
      sql: 'SELECT s, i, #{echo} AS echo FROM things WHERE i > #{floor} ORDER BY s LIMIT 5',
      params: { floor: { type: 'integer' }, echo: { type: 'string' } },
    },
  ],
};

const configFile = path.join(os.tmpdir(), `hostile-requests-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(CONFIG));
const harness = new ServiceHarness(configFile, { sources: true });
const ids: string[] = [];

beforeAll(async () => {
  await harness.start();
  for (let k = 0; k < 6; k++) {
    const res = await harness.create(
      'things',
      { s: `s${k}`, i: k, n: k / 3, region: k % 2 ? 'EU' : 'US', e: 'x', j: { k } },
      { app: FULL },
    );
    ids.push(res.body.data.id);
  }
});
afterAll(async () => {
  await harness.stop();
  rmSync(configFile, { force: true });
});

// ---- Generators ----

/** Numbers at and around every edge the store and the types have. */
const extremeNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1e126,
    -1e126,
    9.999999999999998e125,
    -9.999999999999998e125,
    1e-130,
    -1e-130,
    1e-131,
    5e-324,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    Number.MIN_SAFE_INTEGER,
    0.1 + 0.2,
    2 ** 53,
    1e21,
    123456789.12345678,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Text with control characters, lone surrogates, bidi overrides, astral characters, and numeric-looking text. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom(
      '\u0000',
      '\u0007',
      '\n',
      '\u001f',
      '\u007f',
      '\u202e',
      '\ufeff',
      '\ud800',
      '\udfff',
      '🙂',
      'ǅ',
      'İ',
      'ß',
      '%',
      '_',
      '\\',
      '"',
      "'",
    ),
    maxLength: 20,
  }),
  fc.constantFrom(
    '',
    ' ',
    '1e999',
    '-1e999',
    '1e126',
    '0x10',
    ' 42 ',
    '+7',
    '.5',
    '5.',
    'NaN',
    'Infinity',
    '2024-02-30',
    '2024-02-29',
    '9999-12-31 23:59:59',
    '0000-00-00 00:00:00',
  ),
  extremeNumber.map(String),
);

const scalar = fc.oneof(extremeNumber, hostileText, fc.boolean(), fc.constant(null));
/** A value of any JSON shape, scalars weighted first. */
const anyValue = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 130 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileText, scalar, { maxKeys: 3 }) },
);

type FieldType = (typeof FIELDS)[number]['type'] | 'id' | 'stamp';
const TYPE_OF: Record<string, FieldType> = {
  ...Object.fromEntries(FIELDS.map((f) => [f.name, f.type])),
  id: 'id',
  gmt_create: 'stamp',
  gmt_modified: 'stamp',
};

/** The type of a field name; made-up names (`__proto__` included) are treated as text. */
const typeOf = (name: string): FieldType => (Object.hasOwn(TYPE_OF, name) ? (TYPE_OF[name] as FieldType) : 'string');

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const dateText = fc
  .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
  .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
const datetimeText = fc
  .tuple(dateText, fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 60 }))
  .map(([d, h, mi, se]) => `${d} ${pad(h, 2)}:${pad(mi, 2)}:${pad(se, 2)}`);

/** A value meant for a field of `type`: in range for it most of the time, at or past its edges often. */
function typedValue(type: FieldType): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
    case 'text':
      return hostileText;
    case 'integer':
      return fc.oneof(
        fc.integer(),
        fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, '12', ' -3 ', '1.5'),
      );
    case 'number':
      return fc.oneof(extremeNumber, extremeNumber.map(String));
    case 'boolean':
      return fc.oneof(fc.boolean(), fc.constantFrom('true', 0, 1));
    case 'date':
      return dateText;
    case 'datetime':
    case 'stamp':
      return datetimeText;
    case 'enum':
      return fc.oneof(fc.constantFrom('x', 'y', 'z'), fc.constantFrom('X', '', 'w'));
    case 'json':
      return fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant(JSON.parse(`${'['.repeat(31)}1${']'.repeat(31)}`)));
    case 'id':
      return fc.oneof(
        fc.constantFrom(...[0, 1, 2, 3, 4, 5]).map((k) => ids[k]),
        fc.nat(),
        hostileText,
      );
  }
}

/** Well-formed text: any code point, control characters and astral ones included, never a lone surrogate. */
const wellFormedText = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.string({
      unit: fc.constantFrom('\u0000', '\n', '\u001f', '\u007f', '\u202e', '\ufeff', '🙂', 'İ', 'ß', '%', '_', '"'),
      maxLength: 12,
    }),
  )
  .filter((text) => text.isWellFormed());
const validNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    9.999999999999998e125,
    -9.999999999999998e125,
    1e-130,
    -1e-130,
    Number.MAX_SAFE_INTEGER,
    0.1 + 0.2,
    1e21,
  ),
  fc
    .double({ min: -9.999999999999998e125, max: 9.999999999999998e125, noNaN: true })
    .filter((x) => x === 0 || Math.abs(x) >= 1e-130),
);
const validDate = fc.date({
  min: new Date('0001-01-01T00:00:00Z'),
  max: new Date('9999-12-31T23:59:59Z'),
  noInvalidDate: true,
});

/** A value a field of `type` accepts, at its edges often: most requests must get past validation. */
function validValue(type: FieldType): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
    case 'text':
      return wellFormedText;
    case 'integer':
      return fc.oneof(fc.integer(), fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0));
    case 'number':
      return validNumber;
    case 'boolean':
      return fc.boolean();
    case 'date':
      return validDate.map((d) => d.toISOString().slice(0, 10));
    case 'datetime':
    case 'stamp':
      return validDate.map((d) => d.toISOString().slice(0, 19).replace('T', ' '));
    case 'enum':
      return fc.constantFrom('x', 'y', 'z');
    case 'json':
      return fc.jsonValue({ maxDepth: 4 });
    case 'id':
      return fc.constantFrom(...[0, 1, 2, 3, 4, 5]).map((k) => ids[k]);
  }
}

/** Mostly accepted values, sometimes values past the type's edges. */
const fieldValue = (type: FieldType) =>
  fc.oneof({ weight: 12, arbitrary: validValue(type) }, { weight: 1, arbitrary: typedValue(type) });

/** The suffixes and operators each type supports (docs/interface.md §5). */
const SUPPORTED: Record<FieldType, { suffixes: string[]; operators: string[] }> = (() => {
  const all = {
    suffixes: ['', '_like', '_start', '_end', '_in', '_is_null'],
    operators: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$contain', '$startWith', '$endWith', '$in', '$notNull'],
  };
  const ordered = {
    suffixes: ['', '_start', '_end', '_in', '_is_null'],
    operators: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$notNull'],
  };
  const textual = {
    suffixes: ['', '_like', '_in', '_is_null'],
    operators: ['$eq', '$ne', '$contain', '$startWith', '$endWith', '$in', '$notNull'],
  };
  return {
    string: all,
    text: textual,
    enum: textual,
    integer: ordered,
    number: ordered,
    date: ordered,
    datetime: ordered,
    stamp: ordered,
    id: ordered,
    boolean: { suffixes: ['', '_is_null'], operators: ['$eq', '$ne', '$notNull'] },
    json: { suffixes: ['_is_null'], operators: ['$notNull'] },
  };
})();

/** Field names: mostly the dataset's and the system fields; sometimes hidden (for the scoped caller) or made up. */
const fieldName = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom(...FIELD_NAMES, 'id', 'gmt_create', 'gmt_modified') },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.constantFrom('nosuch', '__proto__', 'constructor', 'toString', ''), hostileText),
  },
);
const typedField = fieldName.chain((name) => fieldValue(typeOf(name)).map((value) => ({ name, value })));
const SUFFIXES = ['', '_like', '_start', '_end', '_in', '_is_null'] as const;
const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$contain', '$startWith', '$endWith', '$in', '$notNull'];

/** A list of typed values: empty, short, at the 100-value limit, or past it. */
const listOf = (type: FieldType) =>
  fc.oneof(
    { weight: 16, arbitrary: fc.array(fieldValue(type), { minLength: 1, maxLength: 5 }) },
    { weight: 1, arbitrary: fc.array(validValue(type), { minLength: 95, maxLength: 120 }) },
    { weight: 1, arbitrary: fc.constant([]) },
  );

/** The operand an operator or suffix takes, typed for the field. */
function operand(type: FieldType, operator: string): fc.Arbitrary<unknown> {
  if (operator === '_in' || operator === '$in') return listOf(type);
  if (operator === '_is_null' || operator === '$notNull') return fc.boolean();
  if (['_like', '$contain', '$startWith', '$endWith'].includes(operator)) return fc.oneof(wellFormedText, hostileText);
  if (operator === '$eq' || operator === '$ne')
    return fc.oneof({ weight: 5, arbitrary: fieldValue(type) }, { weight: 1, arbitrary: fc.constant(null) });
  return fieldValue(type);
}

const suffixFilters = fc
  .array(
    fc
      .tuple(fieldName, fc.nat())
      .chain(([name, pick]) => {
        const supported = SUPPORTED[typeOf(name)].suffixes;
        // One time in fifteen, any suffix: the unsupported ones must be a clear 1001.
        const suffix =
          pick % 15 === 0
            ? (SUFFIXES[pick % SUFFIXES.length] as string)
            : (supported[pick % supported.length] as string);
        return fc.constant([name, suffix] as const);
      })
      .chain(([name, suffix]) => operand(typeOf(name), suffix).map((value) => [`${name}${suffix}`, value] as const)),
    { maxLength: 4 },
  )
  .map((pairs) => Object.fromEntries(pairs));

const leaf = fc.oneof(
  typedField.map(({ name, value }) => ({ [name]: value })),
  fc
    .tuple(fieldName, fc.array(fc.nat(), { minLength: 1, maxLength: 3 }))
    .map(([name, picks]) => {
      const supported = SUPPORTED[typeOf(name)].operators;
      const operators = picks.map((pick) =>
        pick % 15 === 0
          ? (OPERATORS[pick % OPERATORS.length] as string)
          : (supported[pick % supported.length] as string),
      );
      return [name, operators] as const;
    })
    .chain(([name, operators]) =>
      fc
        .tuple(...operators.map((op) => operand(typeOf(name), op).map((value) => [op, value] as const)))
        .map((pairs) => ({ [name]: Object.fromEntries(pairs) })),
    ),
);
/** Nested logical operators: one-element and empty ones included, nesting past the depth limit sometimes. */
const whereTree = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 10, withCrossShrink: true },
    { weight: 8, arbitrary: leaf },
    { weight: 3, arbitrary: fc.record({ $and: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }) },
    { weight: 3, arbitrary: fc.record({ $or: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }) },
    { weight: 1, arbitrary: fc.constantFrom({ $and: [] }, { $or: [] }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(leaf, fc.array(tie('node'), { minLength: 1, maxLength: 2 }))
        .map(([l, items]) => ({ ...(l as object), $or: items })),
    },
  ),
})).node;
/** Broad filters: many conditions, up to and past the 100-condition limit. */
const wideWhere = fc
  .tuple(fc.integer({ min: 1, max: 130 }), fc.constantFrom(...FIELD_NAMES), fc.constantFrom('$and', '$or'))
  .chain(([count, name, op]) =>
    fc
      .array(operand(typeOf(name), '$ne'), { minLength: count, maxLength: count })
      .map((values) => ({ [op]: values.map((v) => ({ [name]: { $ne: v } })) })),
  );

const sortList = fc.oneof(
  {
    weight: 15,
    arbitrary: fc.array(
      fc.tuple(fieldName, fc.constantFrom('asc', 'desc')).map(([n, d]) => ({ [n]: d })),
      { maxLength: 4 },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.array(
        fc.tuple(fieldName, anyValue).map(([n, d]) => ({ [n]: d })),
        { maxLength: 15 },
      ),
      anyValue,
    ),
  },
);

const listParams = fc
  .record(
    {
      filters: suffixFilters,
      where: fc.oneof(
        { weight: 6, arbitrary: whereTree },
        { weight: 2, arbitrary: wideWhere },
        { weight: 1, arbitrary: anyValue },
      ),
      ytSortList: sortList,
      select: fc.oneof(
        { weight: 15, arbitrary: fc.array(fieldName, { minLength: 1, maxLength: 30 }) },
        { weight: 1, arbitrary: anyValue },
      ),
      currentPage: fc.oneof(
        { weight: 15, arbitrary: fc.integer({ min: 1, max: 3 }) },
        { weight: 1, arbitrary: fc.oneof(extremeNumber, hostileText) },
      ),
      pageSize: fc.oneof(
        { weight: 15, arbitrary: fc.integer({ min: 1, max: 150 }) },
        { weight: 1, arbitrary: fc.oneof(extremeNumber, hostileText) },
      ),
    },
    { requiredKeys: ['filters'] },
  )
  .map(({ filters, ...rest }) => ({ ...filters, ...rest }));

const recordFields = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: typedField },
      { weight: 1, arbitrary: fc.record({ name: fieldName, value: anyValue }) },
    ),
    { maxLength: 6 },
  )
  .map((pairs) => Object.fromEntries(pairs.map(({ name, value }) => [name, value])));
const someId = fc.oneof(
  fc.constantFrom(...[0, 1, 2, 3, 4, 5]).map((k) => ({ known: k })),
  fc.constantFrom(...[0, 1, 2, 3, 4, 5]).map((k) => ({ known: k })),
  fc.oneof(extremeNumber, hostileText, fc.constant(null), fc.string({ maxLength: 200 })).map((raw) => ({ raw })),
);
const app = fc.oneof({ weight: 3, arbitrary: fc.constant(FULL) }, { weight: 1, arbitrary: fc.constant(SCOPED) });

// ---- The property ----

const STATUS: Record<number, number> = {
  1001: 400,
  1002: 401,
  1003: 401,
  1004: 404,
  1005: 404,
  1006: 403,
  2001: 504,
  2002: 404,
  4001: 429,
};

function assertEnvelope(res: CallResult, request: unknown): void {
  const { body } = res;
  const context = JSON.stringify(request).slice(0, 2000);
  expect({ requestId: res.headers.get('x-request-id'), context }).toEqual({
    requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    context,
  });
  if (body.success) {
    expect({ status: res.status, keys: Object.keys(body).sort(), context }).toEqual({
      status: 200,
      keys: ['data', 'msg', 'success'],
      context,
    });
    return;
  }
  // 3001 is the only code with no entry: it fails here, with the request that caused it.
  expect({ code: body.errorCode, status: res.status, context }).toEqual({
    code: expect.any(Number),
    status: STATUS[body.errorCode as number],
    context,
  });
  expect(typeof body.errorMsg).toBe('string');
  expect(body.data).toBeNull();
  expect(body.msg).toBeNull();
}

const resolveId = (id: { known: number } | { raw: unknown }) => ('known' in id ? ids[id.known] : id.raw);

describe('no well-formed request answers 3001 or leaves the envelope', () => {
  it('get-list: suffix filters, where trees, sorts, select and paging (900 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(app, listParams, async (caller, paramMap) => {
        assertEnvelope(await harness.getList('things', paramMap, { app: caller }), paramMap);
      }),
      { numRuns: 900, seed: 1601 },
    );
  }, 240_000);

  it('create (300 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(app, recordFields, async (caller, paramMap) => {
        assertEnvelope(await harness.create('things', paramMap, { app: caller }), paramMap);
      }),
      { numRuns: 300, seed: 1602 },
    );
  }, 120_000);

  it('update (300 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(app, someId, recordFields, async (caller, id, fields) => {
        const paramMap = { ...fields, id: resolveId(id) };
        assertEnvelope(await harness.update('things', paramMap, { app: caller }), paramMap);
      }),
      { numRuns: 300, seed: 1603 },
    );
  }, 120_000);

  it('get-one (200 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(app, someId, async (caller, id) => {
        assertEnvelope(await harness.getOne('things', resolveId(id), { app: caller }), id);
      }),
      { numRuns: 200, seed: 1604 },
    );
  }, 60_000);

  it('custom SQL: parameters of every type and none (300 cases)', async () => {
    const sqlRequest = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          sqlCode: fc.constant('fuzz-sum'),
          params: fc.oneof(
            {
              weight: 4,
              arbitrary: fc.record(
                { min: typedValue('number'), pattern: fc.oneof(hostileText, fc.constant(null)) },
                { requiredKeys: ['min'] },
              ),
            },
            {
              weight: 1,
              arbitrary: fc.oneof(fc.record({ min: anyValue, pattern: anyValue }, { requiredKeys: [] }), anyValue),
            },
          ),
        }),
      },
      {
        weight: 4,
        arbitrary: fc.record({
          sqlCode: fc.constant('fuzz-scoped'),
          params: fc.oneof(
            {
              weight: 4,
              arbitrary: fc.record({ floor: typedValue('integer'), echo: hostileText }, { requiredKeys: [] }),
            },
            {
              weight: 1,
              arbitrary: fc.dictionary(fc.oneof(fc.constantFrom('floor', 'echo'), fieldName), anyValue, { maxKeys: 3 }),
            },
          ),
        }),
      },
      { weight: 1, arbitrary: fc.record({ id: fc.oneof(extremeNumber, hostileText), params: fc.constant({}) }) },
    );
    await fc.assert(
      fc.asyncProperty(sqlRequest, async (request) => {
        const caller = 'sqlCode' in request && request.sqlCode === 'fuzz-scoped' ? SCOPED : FULL;
        const res = await harness.call('/api/custom/executeSql', request, { app: caller, datasetCode: null });
        assertEnvelope(res, request);
      }),
      { numRuns: 300, seed: 1605 },
    );
  }, 120_000);
});

// ---- Requests no client would send ----

interface RawAnswer {
  status: number;
  requestId: string | undefined;
  body: unknown;
}

/**
 * A request through node:http with its header lines exactly as given (names such as `__proto__` included), signed
 * for `signed` when given, with the body as raw text.
 */
function rawCall(
  method: string,
  route: string,
  options: { signed?: { app: AppCredentials; datasetCode?: string }; headers?: [string, string][]; body?: string },
): Promise<RawAnswer> {
  const url = new URL(route, harness.url);
  // Header lines as given: node:http then adds none of its own, Host included.
  const lines: string[] = ['Host', url.host, 'Content-Type', 'application/json'];
  if (options.signed) {
    const { app, datasetCode } = options.signed;
    const timeStamp = String(Date.now());
    const token = signRequest({ accessKey: app.accessKey, appCode: app.appCode, datasetCode, timeStamp }, app.secret);
    lines.push('X-Time-Stamp', timeStamp, 'X-App-Code', app.appCode, 'X-Token', token);
    if (datasetCode) lines.push('X-Dataset-Code', datasetCode);
  }
  for (const [name, value] of options.headers ?? []) lines.push(name, value);
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  if (body) lines.push('Content-Length', String(body.length));
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: lines }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          requestId: res.headers['x-request-id'] as string | undefined,
          body: JSON.parse(text),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a caller sees of a refusal: status, envelope, and that the answer carries a request id. */
function refusal(status: number, errorCode: number, errorMsg: string) {
  return { status, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), body: failureWith(errorCode, errorMsg) };
}

/** A JSON value nested `levels` deep, as text (no JSON.stringify could write it). */
function nestedText(levels: number, shape: 'arrays' | 'objects'): string {
  return shape === 'arrays'
    ? `${'['.repeat(levels)}1${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

const TOO_DEEP = 'request body nests deeper than 64 levels; a json field may hold at most 30 levels';
const WRITES = new Set(['create', 'batch-create', 'update']);

interface DeepRequest {
  route: string;
  datasetCode?: string;
  body: string;
}

/** Each operation with `deep` in each place of its body: for the data operations, on `datasetCode`. */
function deepRequests(datasetCode: string, deep: string): DeepRequest[] {
  const data = (operation: string, rest: string): DeepRequest => ({
    route: `/openapi/data/${operation}`,
    datasetCode,
    body: `{"appCode":"${FULL.appCode}","datasetCode":"${datasetCode}",${rest}}`,
  });
  return [
    data('get-list', `"paramMap":{"where":${deep}}`),
    data('get-list', `"paramMap":{"s":${deep}}`),
    data('get-list', `"paramMap":{"ytSortList":${deep}}`),
    data('get-list', `"paramMap":{"select":${deep}}`),
    data('get-one', `"paramMap":{"id":${deep}}`),
    data('create', `"paramMap":{"j":${deep}}`),
    data('create', `"paramMap":{"s":${deep}}`),
    // A list create does not read.
    data('create', `"paramMap":{"s":"x"},"paramList":${deep}`),
    data('batch-create', `"paramList":[{"j":${deep}}]`),
    data('batch-create', `"paramList":${deep}`),
    data('update', `"paramMap":{"id":"x","j":${deep}}`),
    // A key no operation reads.
    ...['get-list', 'get-one', 'create', 'batch-create', 'update'].map((operation) =>
      data(operation, `"paramMap":{"s":"x"},"other":${deep}`),
    ),
  ];
}

describe('JSON nested deeper than any operation takes', () => {
  for (const levels of [1_000, 10_000, 100_000]) {
    it(`is 1001 before anything walks it, at ${levels.toLocaleString('en-US')} levels: every operation and place, hooks and Idempotency-Key or not`, async () => {
      const answers: { request: string; answer: RawAnswer }[] = [];
      for (const shape of ['arrays', 'objects'] as const) {
        const deep = nestedText(levels, shape);
        const requests = [
          ...deepRequests('things', deep),
          ...deepRequests('hooked', deep),
          {
            route: '/api/custom/executeSql',
            body: `{"appCode":"${FULL.appCode}","sqlCode":"fuzz-sum","params":{"min":${deep}}}`,
          },
          {
            route: '/api/custom/executeSql',
            body: `{"appCode":"${FULL.appCode}","sqlCode":"fuzz-sum","other":${deep}}`,
          },
        ];
        for (const request of requests) {
          const operation = request.route.split('/').pop() as string;
          const keys = WRITES.has(operation) ? [undefined, `deep-${levels}-${shape}-${answers.length}`] : [undefined];
          for (const key of keys) {
            const signed = { app: FULL, ...(request.datasetCode ? { datasetCode: request.datasetCode } : {}) };
            const answer = await rawCall('POST', request.route, {
              signed,
              headers: key ? [['Idempotency-Key', key]] : [],
              body: request.body,
            });
            answers.push({ request: `${request.body.slice(0, 90)} key=${key !== undefined}`, answer });
          }
        }
        // The same bodies on the /client/ paths, with a personal access key.
        for (const request of deepRequests('hooked', deep)) {
          const answer = await rawCall('POST', request.route.replace('/openapi/', '/client/'), {
            headers: [['X-User-AK', USER_KEY]],
            body: request.body,
          });
          answers.push({ request: `client ${request.body.slice(0, 90)}`, answer });
        }
      }
      // Two shapes × (two datasets × (16 requests + the 9 writes again with a key) + 2 SQL + 16 client-mode).
      expect(answers.length).toBe(2 * (2 * (16 + 9) + 2 + 16));
      for (const { request, answer } of answers) {
        expect({ request, answer }).toEqual({ request, answer: refusal(400, 1001, TOO_DEEP) });
      }
    }, 120_000);
  }

  it('reaches a hook only as deep as a body may be, and the operation then answers as without the hook', async () => {
    const within = (levels: number) => JSON.parse(nestedText(levels, 'objects'));
    for (const datasetCode of ['things', 'hooked']) {
      const json = await harness.create(datasetCode, { j: within(31) }, { app: FULL });
      const text = await harness.create(datasetCode, { s: within(60) }, { app: FULL });
      const list = await harness.batchCreate(datasetCode, [{ s: 'a' }, { s: within(50) }], { app: FULL });
      expect([json.body, text.body, list.body]).toEqual([
        failureWith(1001, "field 'j' nests deeper than 30 levels"),
        failureWith(1001, "field 's' expects a string"),
        failureWith(1001, "paramList[1]: field 's' expects a string"),
      ]);
    }
  });

  it('refuses what an operation would refuse for its shape before any hook sees it', async () => {
    const missing = await harness.call('/openapi/data/create', { datasetCode: 'hooked' }, { app: FULL });
    const notAnObject = await harness.call(
      '/openapi/data/update',
      { datasetCode: 'hooked', paramMap: [1, 2] },
      { app: FULL },
    );
    const emptyList = await harness.batchCreate('hooked', [], { app: FULL });
    // A create's body with a paramList: create reads its paramMap, and so does its hook.
    const created = await harness.call(
      '/openapi/data/create',
      { datasetCode: 'hooked', paramMap: { s: 'from paramMap' }, paramList: [{ s: 'not read' }] },
      { app: FULL },
    );
    expect([missing.body, notAnObject.body, emptyList.body]).toEqual([
      failureWith(1001, 'paramMap is required'),
      failureWith(1001, 'paramMap must be a JSON object'),
      failureWith(1001, 'paramList is empty: send 1 to 1000 records'),
    ]);
    expect(created.body).toMatchObject({ success: true, data: { s: 'from paramMap' } });
    const runsOf = (result: CallResult) =>
      harness.logLines
        .filter((line) => line.hookFunction === 'pass' && line.requestId === result.headers.get('x-request-id'))
        .map((line) => line.hookNode);
    expect([missing, notAnObject, emptyList, created].map(runsOf)).toEqual([[], [], [], ['before', 'after']]);
  });
});

describe('prototype names in headers, bodies, codes and paths', () => {
  const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

  // A record of its own: the generated updates above change the first ones.
  let probeId = '';
  beforeAll(async () => {
    const created = await harness.create('things', { s: 'prototype probe' }, { app: FULL });
    probeId = created.body.data.id;
  });

  it('are plain header names: ignored like any unknown header', async () => {
    const headers = PROTOTYPE_NAMES.map((name): [string, string] => [name, 'x']);
    const list = await rawCall('POST', '/openapi/data/get-list', {
      signed: { app: FULL, datasetCode: 'things' },
      headers,
      body: `{"appCode":"${FULL.appCode}","datasetCode":"things","paramMap":{"s":"prototype probe"}}`,
    });
    const created = await rawCall('POST', '/openapi/data/create', {
      signed: { app: FULL, datasetCode: 'hooked' },
      headers: [...headers, ['Idempotency-Key', 'prototype-headers']],
      body: `{"appCode":"${FULL.appCode}","datasetCode":"hooked","paramMap":{"s":"with odd headers"}}`,
    });
    const client = await rawCall('POST', '/client/data/get-one', {
      headers: [...headers, ['X-User-AK', USER_KEY]],
      body: `{"appCode":"${FULL.appCode}","datasetCode":"things","paramMap":{"id":"${probeId}"}}`,
    });
    const noRoute = await rawCall('POST', '/openapi/data/delete', { headers, body: '{}' });
    expect(list).toMatchObject({ status: 200, requestId: expect.any(String), body: { success: true } });
    expect((list.body as { data: { paging: { totalCount: number } } }).data.paging.totalCount).toBe(1);
    expect(created).toMatchObject({
      status: 200,
      requestId: expect.any(String),
      body: { data: { s: 'with odd headers' } },
    });
    expect(client).toMatchObject({
      status: 200,
      requestId: expect.any(String),
      body: { data: { id: probeId, s: 'prototype probe' } },
    });
    expect(noRoute).toEqual(refusal(400, 1001, 'no operation at POST /openapi/data/delete'));
  });

  it('are unknown fields, codes and functions in bodies and paths', async () => {
    const signedCall = (route: string, datasetCode: string | undefined, body: string, app = FULL) =>
      rawCall('POST', route, { signed: { app, ...(datasetCode ? { datasetCode } : {}) }, body });
    const data = (datasetCode: string, rest: string) =>
      `{"appCode":"${FULL.appCode}","datasetCode":"${datasetCode}",${rest}}`;
    const answers: Record<string, RawAnswer> = {};
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      answers[`create ${name}`] = await signedCall(
        '/openapi/data/create',
        'hooked',
        data('hooked', `"paramMap":{"${name}":{"s":"x"}}`),
      );
      answers[`batch ${name}`] = await signedCall(
        '/openapi/data/batch-create',
        'things',
        data('things', `"paramList":[{"${name}":1}]`),
      );
      answers[`update ${name}`] = await signedCall(
        '/openapi/data/update',
        'things',
        data('things', `"paramMap":{"id":"${ids[0]}","${name}":1}`),
      );
      answers[`get-one ${name}`] = await signedCall(
        '/openapi/data/get-one',
        'hooked',
        data('hooked', `"paramMap":{"id":"${name}"}`),
      );
      answers[`filter ${name}`] = await signedCall(
        '/openapi/data/get-list',
        'things',
        data('things', `"paramMap":{"${name}_in":["x"]}`),
      );
      answers[`where ${name}`] = await signedCall(
        '/openapi/data/get-list',
        'things',
        data('things', `"paramMap":{"where":{"${name}":{"$eq":1}}}`),
      );
      answers[`sort ${name}`] = await signedCall(
        '/openapi/data/get-list',
        'things',
        data('things', `"paramMap":{"ytSortList":[{"${name}":"asc"}]}`),
      );
      answers[`select ${name}`] = await signedCall(
        '/openapi/data/get-list',
        'things',
        data('things', `"paramMap":{"select":["${name}"]}`),
      );
      answers[`body key ${name}`] = await signedCall(
        '/openapi/data/get-list',
        'things',
        data('things', `"${name}":{"appCode":"other"},"paramMap":{"s":"prototype probe"}`),
      );
      answers[`sql param ${name}`] = await signedCall(
        '/api/custom/executeSql',
        undefined,
        `{"appCode":"${FULL.appCode}","sqlCode":"fuzz-sum","params":{"min":1,"${name}":1}}`,
      );
      answers[`sql code ${name}`] = await signedCall(
        '/api/custom/executeSql',
        undefined,
        `{"appCode":"${FULL.appCode}","sqlCode":"${name}"}`,
      );
      const asApp = { appCode: name, accessKey: FULL.accessKey, secret: FULL.secret };
      answers[`app ${name}`] = await signedCall(
        '/openapi/data/get-list',
        'things',
        `{"appCode":"${name}","datasetCode":"things"}`,
        asApp,
      );
      answers[`dataset ${name}`] = await signedCall('/openapi/data/get-list', name, data(name, '"paramMap":{}'));
      answers[`function ${name}`] = await rawCall('GET', `/client/bff/endpoint/${FULL.appCode}/${name}`, {
        headers: [['X-User-AK', USER_KEY]],
      });
      answers[`path app ${name}`] = await rawCall('GET', `/client/bff/endpoint/${name}/pass`, {
        headers: [['X-User-AK', USER_KEY]],
      });
      answers[`path ${name}`] = await rawCall('POST', `/openapi/data/${name}`, { body: '{}' });
    }
    const found = (status: number, code: number, message: string) => refusal(status, code, message);
    const expected: Record<string, unknown> = {};
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      Object.assign(expected, {
        [`create ${name}`]: found(400, 1001, `field '${name}' is not defined in dataset 'hooked'`),
        [`batch ${name}`]: found(400, 1001, `paramList[0]: field '${name}' is not defined in dataset 'things'`),
        [`update ${name}`]: found(400, 1001, `field '${name}' is not defined in dataset 'things'`),
        [`get-one ${name}`]: found(404, 2002, `record '${name}' not found in dataset 'hooked'`),
        [`filter ${name}`]: found(400, 1001, `${name}_in: unknown field or filter in dataset 'things'`),
        [`where ${name}`]: found(400, 1001, `where.${name}: unknown field '${name}' in dataset 'things'`),
        [`sort ${name}`]: found(400, 1001, `ytSortList[0].${name}: unknown field '${name}' in dataset 'things'`),
        [`select ${name}`]: found(400, 1001, `select[0]: unknown field '${name}' in dataset 'things'`),
        // An unknown body key is not read: the list is the caller's own.
        [`body key ${name}`]: {
          status: 200,
          requestId: expect.any(String),
          body: expect.objectContaining({
            success: true,
            data: expect.objectContaining({ paging: { pageSize: 20, totalCount: 1, currentPage: 1 } }),
          }),
        },
        [`sql param ${name}`]: found(400, 1001, `parameter '${name}' is not declared by this query`),
        [`sql code ${name}`]: found(400, 1001, `query '${name}' not found`),
        [`app ${name}`]: found(404, 1004, `application '${name}' not found`),
        [`dataset ${name}`]: found(404, 1005, `dataset '${name}' not found`),
        [`function ${name}`]: found(404, 2002, `backend function '${name}' not found in application 'app-fuzz'`),
        [`path app ${name}`]: found(403, 1006, `this personal access key does not belong to application '${name}'`),
        [`path ${name}`]: found(400, 1001, `no operation at POST /openapi/data/${name}`),
      });
    }
    expect(answers).toEqual(expected);
  });
});

describe("the local server's own refusals", () => {
  it('answer with the envelope and a request id, as the pipeline does', async () => {
    const listBody = `{"appCode":"${FULL.appCode}","datasetCode":"things","paramMap":{}}`;
    const answers = {
      noRoute: await rawCall('POST', '/openapi/data/drop-table', { body: listBody }),
      noRouteGet: await rawCall('GET', '/', {}),
      wrongMethod: await rawCall('GET', '/openapi/data/get-list', {}),
      overLambdaLimit: await rawCall('POST', '/openapi/data/get-list', {
        signed: { app: FULL, datasetCode: 'things' },
        body: `{"appCode":"${FULL.appCode}","pad":"${'x'.repeat(7 * 1024 * 1024)}"}`,
      }),
      overBodyLimit: await rawCall('POST', '/openapi/data/get-list', {
        signed: { app: FULL, datasetCode: 'things' },
        body: `{"appCode":"${FULL.appCode}","pad":"${'x'.repeat(2 * 1024 * 1024)}"}`,
      }),
    };
    expect(answers).toEqual({
      noRoute: refusal(400, 1001, 'no operation at POST /openapi/data/drop-table'),
      noRouteGet: refusal(400, 1001, 'no operation at GET /'),
      wrongMethod: refusal(400, 1001, '/openapi/data/get-list accepts POST only'),
      overLambdaLimit: refusal(400, 1001, 'request body is larger than 1 MB (1048576 bytes)'),
      overBodyLimit: refusal(400, 1001, 'request body is larger than 1 MB (1048576 bytes)'),
    });
  });
});
