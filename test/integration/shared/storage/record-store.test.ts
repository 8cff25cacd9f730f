/** docs/interface.md §4 over HTTP: create, get-one and update, every field type, system fields and concurrency. */
import { expectFailure } from '../../../support/failure-envelope';
import { ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function nowUtcText(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

describe('create', () => {
  it('answers the complete stored record with generated id and timestamps', async () => {
    const before = nowUtcText();
    const res = await harness.create('typed', {
      s: 'hello',
      t: 'a longer text',
      i: 42,
      n: 3.25,
      b: true,
      d: '2024-02-29',
      dt: '2024-02-29 23:59:59',
      e: 'green',
      j: { nested: [1, { deep: true }], text: 'x' },
    });
    const after = nowUtcText();
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const record = res.body.data;
    expect(Object.keys(record)).toEqual([
      'id',
      's',
      't',
      'i',
      'n',
      'b',
      'd',
      'dt',
      'e',
      'j',
      'gmt_create',
      'gmt_modified',
    ]);
    expect(record).toMatchObject({
      s: 'hello',
      t: 'a longer text',
      i: 42,
      n: 3.25,
      b: true,
      d: '2024-02-29',
      dt: '2024-02-29 23:59:59',
      e: 'green',
      j: { nested: [1, { deep: true }], text: 'x' },
    });
    expect(record.id).toMatch(ULID);
    expect(record.gmt_create).toMatch(TIMESTAMP);
    expect(record.gmt_create >= before && record.gmt_create <= after).toBe(true);
    expect(record.gmt_modified).toBe(record.gmt_create);
  });

  it('fills absent optional fields with null', async () => {
    const res = await harness.create('typed', { s: 'only required' });
    expect(res.body.data).toMatchObject({
      s: 'only required',
      t: null,
      i: null,
      n: null,
      b: null,
      d: null,
      dt: null,
      e: null,
      j: null,
    });
  });

  it('ignores system fields sent by the caller', async () => {
    const res = await harness.create('typed', {
      s: 'x',
      id: 'MY-ID',
      gmt_create: '2000-01-01 00:00:00',
      gmt_modified: '2000-01-01 00:00:00',
    });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toMatch(ULID);
    expect(res.body.data.gmt_create).not.toBe('2000-01-01 00:00:00');
  });

  it('gives every record a new id', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, k) => harness.create('notes', { title: `n${k}` })),
    );
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(10);
  });

  it.each([
    ['a missing required field', { t: 'no s' }, "required field 's' missing"],
    ['a required field sent as null', { s: null }, "field 's' is required and cannot be null"],
    [
      'a field the dataset does not define',
      { s: 'x', colour: 'red' },
      "field 'colour' is not defined in dataset 'typed'",
    ],
  ])('refuses %s with 1001', async (_label, paramMap, message) => {
    const res = await harness.create('typed', paramMap);
    expectFailure(res, 1001, message);
  });

  it('refuses a missing paramMap', async () => {
    const res = await harness.call('/openapi/data/create', { datasetCode: 'typed' });
    expectFailure(res, 1001, 'paramMap is required');
  });
});

describe('field types', () => {
  it.each([
    ['string', 's', 'text', 'text'],
    ['string (empty)', 's', '', ''],
    ['string (unicode)', 's', 'Zürich 東京 🚀', 'Zürich 東京 🚀'],
    ['text', 't', 'line1\nline2', 'line1\nline2'],
    ['integer', 'i', -7, -7],
    ['integer from a numeric string', 'i', '123', 123],
    ['integer at the safe limit', 'i', 9007199254740991, 9007199254740991],
    ['number', 'n', -0.5, -0.5],
    ['number from a numeric string', 'n', '2.75', 2.75],
    ['number in exponent form', 'n', '1e3', 1000],
    ['number, large', 'n', 1e125, 1e125],
    ['boolean false', 'b', false, false],
    ['date', 'd', '2023-12-31', '2023-12-31'],
    ['datetime', 'dt', '2023-12-31 00:00:00', '2023-12-31 00:00:00'],
    ['enum', 'e', 'blue', 'blue'],
    ['json object', 'j', { a: { b: [1, 2, null] } }, { a: { b: [1, 2, null] } }],
    ['json array', 'j', [1, 'two', false], [1, 'two', false]],
    ['json string', 'j', 'just text', 'just text'],
    ['json number', 'j', 12.5, 12.5],
    ['json nested 30 levels', 'j', nest(30), nest(30)],
  ])('accepts a valid %s and answers it as stored', async (_label, field, value, stored) => {
    const created = await harness.create('typed', { s: 'required', [field]: value });
    expect(created.status).toBe(200);
    expect(created.body.data[field]).toEqual(stored);
    const read = await harness.getOne('typed', created.body.data.id);
    expect(read.body.data[field]).toEqual(stored);
  });

  it.each([
    ['string given a number', 's', 12, "field 's' expects a string"],
    ['string given an object', 's', { a: 1 }, "field 's' expects a string"],
    ['string with a lone surrogate', 's', '\ud800x', "field 's' expects a string (the text contains invalid Unicode)"],
    ['text given a boolean', 't', true, "field 't' expects a string"],
    ['integer given a fraction', 'i', 1.5, "field 'i' expects an integer"],
    ['integer given a fractional string', 'i', '1.5', "field 'i' expects an integer"],
    ['integer given text', 'i', 'twelve', "field 'i' expects an integer"],
    [
      'integer beyond the safe range',
      'i',
      9007199254740994,
      "field 'i' expects an integer (must be between -9007199254740991 and 9007199254740991)",
    ],
    ['number given text', 'n', 'abc', "field 'n' expects a number"],
    ['number given an empty string', 'n', '', "field 'n' expects a number"],
    ['number given a boolean', 'n', false, "field 'n' expects a number"],
    [
      'number too large for the store',
      'n',
      1e200,
      "field 'n' expects a number (magnitude must be between 1e-130 and 1e126)",
    ],
    [
      'number too small for the store',
      'n',
      1e-200,
      "field 'n' expects a number (magnitude must be between 1e-130 and 1e126)",
    ],
    ['boolean given a string', 'b', 'true', "field 'b' expects a boolean (true or false)"],
    ['boolean given 1', 'b', 1, "field 'b' expects a boolean (true or false)"],
    ['date in another format', 'd', '31/12/2023', "field 'd' expects a date 'YYYY-MM-DD'"],
    ['date that does not exist', 'd', '2023-02-29', "field 'd' expects a date 'YYYY-MM-DD'"],
    ['date with a time', 'd', '2023-02-01 10:00:00', "field 'd' expects a date 'YYYY-MM-DD'"],
    ['datetime without seconds', 'dt', '2023-02-01 10:00', "field 'dt' expects a datetime 'YYYY-MM-DD HH:MM:SS'"],
    ['datetime at hour 24', 'dt', '2023-02-01 24:00:00', "field 'dt' expects a datetime 'YYYY-MM-DD HH:MM:SS'"],
    ['datetime in ISO form', 'dt', '2023-02-01T10:00:00Z', "field 'dt' expects a datetime 'YYYY-MM-DD HH:MM:SS'"],
    ['enum outside its options', 'e', 'purple', "field 'e' expects one of: red, green, blue"],
    ['enum in another case', 'e', 'RED', "field 'e' expects one of: red, green, blue"],
    ['json nested 31 levels', 'j', nest(31), "field 'j' nests deeper than 30 levels"],
  ])('refuses %s with 1001 naming the field', async (_label, field, value, message) => {
    const res = await harness.create('typed', { s: 'required', [field]: value });
    expectFailure(res, 1001, message);
  });

  it('refuses a record larger than the store allows, saying so', async () => {
    const res = await harness.create('typed', { s: 'x', t: 'y'.repeat(500 * 1024) });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe(
      'the record is too large: a stored record is at most 400 KB; store large content elsewhere or split it',
    );
  });

  it('refuses an update that would make the record too large, and keeps the record', async () => {
    const created = await harness.create('typed', { s: 'x', t: 'a'.repeat(300 * 1024) });
    const res = await harness.update('typed', { id: created.body.data.id, s: 'b'.repeat(200 * 1024) });
    expectFailure(res, 1001);
    expect(res.body.errorMsg).toContain('too large');
    const read = await harness.getOne('typed', created.body.data.id);
    expect(read.body.data.s).toBe('x');
  });
});

describe('get-one', () => {
  it('answers the record by its id', async () => {
    const created = await harness.create('notes', { title: 'find me', f1: 1 });
    const res = await harness.getOne('notes', created.body.data.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, msg: null, data: created.body.data });
  });

  it('answers 2002 (HTTP 404) for an unknown id', async () => {
    const res = await harness.getOne('notes', '01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expectFailure(res, 2002, "record '01ARZ3NDEKTSV4RRFFQ69G5FAV' not found in dataset 'notes'");
  });

  it('accepts a numeric id and answers 2002 when no such record exists', async () => {
    const res = await harness.getOne('notes', 12345);
    expectFailure(res, 2002);
  });

  it('does not find a record of one dataset through another', async () => {
    const created = await harness.create('notes', { title: 'mine' });
    const res = await harness.getOne('typed', created.body.data.id);
    expectFailure(res, 2002);
  });

  it.each([
    ['missing', {}, 'paramMap.id is required'],
    ['null', { id: null }, 'paramMap.id is required'],
    ['an object', { id: { $ne: 1 } }, 'paramMap.id must be a non-empty string of at most 128 characters, or a number'],
    ['an empty string', { id: '' }, 'paramMap.id must be a non-empty string of at most 128 characters, or a number'],
    ['a fraction', { id: 1.5 }, 'paramMap.id must be a non-empty string of at most 128 characters, or a number'],
  ])('refuses an id that is %s with 1001', async (_label, paramMap, message) => {
    const res = await harness.call('/openapi/data/get-one', { datasetCode: 'notes', paramMap });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe(message);
  });
});

describe('update', () => {
  it('changes only the fields sent and refreshes gmt_modified', async () => {
    const created = await harness.create('typed', { s: 'before', i: 1, n: 2.5, e: 'red' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const res = await harness.update('typed', { id: created.body.data.id, i: '5', e: 'blue' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      ...created.body.data,
      i: 5,
      e: 'blue',
      gmt_modified: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.data.gmt_modified > created.body.data.gmt_modified).toBe(true);
    expect((await harness.getOne('typed', created.body.data.id)).body.data).toEqual(res.body.data);
  });

  it('clears an optional field sent as null', async () => {
    const created = await harness.create('typed', { s: 'x', t: 'to be cleared', j: { a: 1 } });
    const res = await harness.update('typed', { id: created.body.data.id, t: null, j: null });
    expect(res.body.data).toMatchObject({ s: 'x', t: null, j: null });
  });

  it('ignores id changes, gmt_create and gmt_modified sent by the caller', async () => {
    const created = await harness.create('typed', { s: 'x' });
    const res = await harness.update('typed', {
      id: created.body.data.id,
      s: 'y',
      gmt_create: '1999-01-01 00:00:00',
      gmt_modified: '1999-01-01 00:00:00',
    });
    expect(res.body.data.id).toBe(created.body.data.id);
    expect(res.body.data.gmt_create).toBe(created.body.data.gmt_create);
    expect(res.body.data.gmt_modified).not.toBe('1999-01-01 00:00:00');
  });

  it.each([
    ['a required field set to null', { s: null }, "field 's' is required and cannot be null"],
    ['a wrong type', { i: 'x' }, "field 'i' expects an integer"],
    ['an unknown field', { nope: 1 }, "field 'nope' is not defined in dataset 'typed'"],
    ['no field besides id', {}, 'nothing to update: send at least one dataset field besides id'],
  ])('refuses %s with 1001 and changes nothing', async (_label, changes, message) => {
    const created = await harness.create('typed', { s: 'keep', i: 7 });
    const res = await harness.update('typed', { id: created.body.data.id, ...changes });
    expect(res.status).toBe(400);
    expect(res.body.errorMsg).toBe(message);
    expect((await harness.getOne('typed', created.body.data.id)).body.data).toEqual(created.body.data);
  });

  it('answers 2002 for an unknown id and creates nothing', async () => {
    const res = await harness.update('notes', { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', title: 'ghost' });
    expectFailure(res, 2002);
    expect((await harness.getOne('notes', '01ARZ3NDEKTSV4RRFFQ69G5FAV')).body.errorCode).toBe(2002);
  });

  it('requires an id', async () => {
    const res = await harness.update('notes', { title: 'no id' });
    expectFailure(res, 1001, 'paramMap.id is required');
  });

  it('keeps all of 20 concurrent partial updates of different fields of one record', async () => {
    const created = await harness.create('notes', { title: 'contended' });
    const id = created.body.data.id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, k) => harness.update('notes', { id, [`f${k + 1}`]: (k + 1) * 10 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const read = await harness.getOne('notes', id);
    const expected: Record<string, number> = {};
    for (let k = 1; k <= 20; k += 1) expected[`f${k}`] = k * 10;
    expect(read.body.data).toMatchObject({ title: 'contended', ...expected });
  });
});

describe('capacity in the request log', () => {
  it('reports the write units of a create and the read units of a get-one', async () => {
    const before = harness.logLines.length;
    const created = await harness.create('notes', { title: 'metered' });
    await harness.getOne('notes', created.body.data.id);
    // The local change log's writer logs lines of its own (operation 'change-log') between the requests' lines.
    const lines = harness.logLines.slice(before);
    const createLine = lines.find((line) => line.operation === 'create');
    const getLine = lines.find((line) => line.operation === 'get-one');
    // A create writes its change item (claimed first) and its record. Each request also pays the quota: one
    // write when its environment holds no token or no live slot, none when it does; never a read.
    expect(createLine).toMatchObject({ operation: 'create', datasetCode: 'notes', readUnits: 0 });
    expect([2, 3]).toContain(createLine?.writeUnits);
    expect(getLine).toMatchObject({ operation: 'get-one', datasetCode: 'notes', readUnits: 1 });
    expect([0, 1]).toContain(getLine?.writeUnits);
    expect(JSON.stringify(createLine)).not.toContain('metered');
  });
});

function nest(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let k = 0; k < levels; k += 1) value = { v: value };
  return value;
}
