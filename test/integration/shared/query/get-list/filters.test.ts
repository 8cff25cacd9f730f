/**
 * Get-list filters over HTTP (docs/interface.md §5): every suffix filter on every type that supports it, system
 * fields, combinations, the structured `where`, `select`, and the 1001 answers for what is not supported.
 */
import path from 'node:path';
import { expectFailure } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));

const RECORDS = [
  {
    name: 'Apple',
    qty: 5,
    price: 1.5,
    status: 'new',
    due: '2024-01-10',
    region: 'EU',
    note: 'Fresh RED apples',
    flag: true,
    at: '2024-01-10 08:00:00',
    meta: { a: 1 },
  },
  {
    name: 'apricot',
    qty: -3,
    price: -2.25,
    status: 'paid',
    due: '2024-02-01',
    region: 'US',
    note: 'dried',
    flag: false,
    at: '2024-02-01 09:30:00',
  },
  { name: 'Banana', qty: 0, price: 0, status: 'shipped', due: '2023-12-31', region: 'EU', meta: [1, 2] },
  {
    name: 'cherry',
    qty: 12,
    price: 100,
    status: 'new',
    region: 'APAC',
    note: 'Red cherries',
    flag: true,
    at: '2024-03-05 23:59:59',
  },
  { name: 'Date', price: '3.75', due: '2024-01-10', note: 'sweet', flag: false },
  {
    name: 'Elder',
    qty: '5',
    price: 1.5,
    status: 'paid',
    due: '2024-05-20',
    region: 'EU',
    note: 'ELDERFLOWER',
    at: '2024-01-10 08:00:01',
    meta: 'x',
  },
  { name: 'fig', qty: 7, price: 1e3, status: 'shipped', due: '2024-01-11', region: 'US', flag: true },
  {
    name: 'Grape',
    qty: 5,
    price: 2,
    status: 'new',
    due: '2024-01-09',
    region: 'EU',
    note: 'red grape',
    flag: false,
    at: '2023-11-11 11:11:11',
  },
];
const ids: Record<string, string> = {};

beforeAll(async () => {
  await harness.start();
  // One at a time, so ids follow this order.
  for (const record of RECORDS) {
    const res = await harness.create('items', record);
    expect(res.body.success).toBe(true);
    ids[record.name] = res.body.data.id;
  }
});
afterAll(() => harness.stop());

/** The names a filter selects, in name order (code point order: capitals first). */
async function namesFor(paramMap: Record<string, unknown>): Promise<string[]> {
  const res = await harness.getList('items', { ytSortList: [{ name: 'asc' }], pageSize: 100, ...paramMap });
  expect(res.body).toMatchObject({ success: true });
  const names = res.body.data.tableData.map((r: { name: string }) => r.name);
  expect(res.body.data.paging.totalCount).toBe(names.length);
  return names;
}

describe('suffix filters on each type', () => {
  it.each([
    ['string =', { name: 'Apple' }, ['Apple']],
    ['string = is case-sensitive', { name: 'apple' }, []],
    ['string _like is case-insensitive', { name_like: 'AP' }, ['Apple', 'Grape', 'apricot']],
    ['string _start/_end inclusive', { name_start: 'Banana', name_end: 'Date' }, ['Banana', 'Date']],
    ['string _end alone', { name_end: 'B' }, ['Apple']],
    ['string _in', { name_in: ['fig', 'Date', 'nope'] }, ['Date', 'fig']],
    [
      'string _is_null false',
      { name_is_null: false },
      ['Apple', 'Banana', 'Date', 'Elder', 'Grape', 'apricot', 'cherry', 'fig'],
    ],
    ['string _is_null true', { name_is_null: true }, []],
    ['unindexed string =', { region: 'EU' }, ['Apple', 'Banana', 'Elder', 'Grape']],
    ['unindexed string _like', { region_like: 'u' }, ['Apple', 'Banana', 'Elder', 'Grape', 'apricot', 'fig']],
    ['unindexed string _start/_end', { region_start: 'B', region_end: 'EZ' }, ['Apple', 'Banana', 'Elder', 'Grape']],
    ['unindexed string _is_null', { region_is_null: true }, ['Date']],
    ['integer =', { qty: 5 }, ['Apple', 'Elder', 'Grape']],
    ['integer = with a numeric string', { qty: '5' }, ['Apple', 'Elder', 'Grape']],
    ['integer range with negatives', { qty_start: -3, qty_end: 0 }, ['Banana', 'apricot']],
    ['integer _start alone', { qty_start: 7 }, ['cherry', 'fig']],
    ['integer _in', { qty_in: [0, 12] }, ['Banana', 'cherry']],
    ['integer _is_null', { qty_is_null: true }, ['Date']],
    ['number range with decimals', { price_start: 1.5, price_end: '3.75' }, ['Apple', 'Date', 'Elder', 'Grape']],
    ['number _end negative', { price_end: -1 }, ['apricot']],
    ['number =', { price: 1000 }, ['fig']],
    ['number _in', { price_in: [0, -2.25] }, ['Banana', 'apricot']],
    ['enum =', { status: 'paid' }, ['Elder', 'apricot']],
    ['enum _in', { status_in: ['new', 'shipped'] }, ['Apple', 'Banana', 'Grape', 'cherry', 'fig']],
    ['enum _like', { status_like: 'IP' }, ['Banana', 'fig']],
    ['enum _is_null', { status_is_null: true }, ['Date']],
    ['date range', { due_start: '2024-01-10', due_end: '2024-01-11' }, ['Apple', 'Date', 'fig']],
    ['date =', { due: '2024-01-10' }, ['Apple', 'Date']],
    ['date _in', { due_in: ['2023-12-31', '2024-05-20'] }, ['Banana', 'Elder']],
    ['date _is_null', { due_is_null: true }, ['cherry']],
    ['text _like', { note_like: 'red' }, ['Apple', 'Grape', 'cherry']],
    ['text =', { note: 'dried' }, ['apricot']],
    ['text _in', { note_in: ['sweet', 'dried'] }, ['Date', 'apricot']],
    ['text _is_null', { note_is_null: true }, ['Banana', 'fig']],
    ['boolean true', { flag: true }, ['Apple', 'cherry', 'fig']],
    ['boolean false', { flag: false }, ['Date', 'Grape', 'apricot']],
    ['boolean _is_null', { flag_is_null: true }, ['Banana', 'Elder']],
    ['datetime range', { at_start: '2024-01-10 08:00:00', at_end: '2024-01-10 08:00:01' }, ['Apple', 'Elder']],
    ['datetime _in', { at_in: ['2024-02-01 09:30:00'] }, ['apricot']],
    ['datetime =', { at: '2023-11-11 11:11:11' }, ['Grape']],
    ['json _is_null false', { meta_is_null: false }, ['Apple', 'Banana', 'Elder']],
    ['json _is_null true', { meta_is_null: true }, ['Date', 'Grape', 'apricot', 'cherry', 'fig']],
  ])('%s', async (_label, filter, expected) => {
    expect(await namesFor(filter)).toEqual(expected);
  });
});

describe('system fields', () => {
  it('filters by id, id_in and an id range', async () => {
    expect(await namesFor({ id: ids.cherry })).toEqual(['cherry']);
    expect(await namesFor({ id_in: [ids.fig, ids.Banana, 'no-such-id'] })).toEqual(['Banana', 'fig']);
    expect(await namesFor({ id_start: ids.Banana, id_end: ids.Date })).toEqual(['Banana', 'Date', 'cherry']);
  });

  it('filters by gmt_create and gmt_modified', async () => {
    expect(await namesFor({ gmt_create_end: '2000-01-01 00:00:00' })).toEqual([]);
    expect(await namesFor({ gmt_create_start: '2000-01-01 00:00:00', name_in: ['fig', 'Date'] })).toEqual([
      'Date',
      'fig',
    ]);
    expect(await namesFor({ gmt_modified_is_null: true })).toEqual([]);
  });
});

describe('combinations (AND)', () => {
  it.each([
    ['two indexed equalities', { status: 'new', qty: 5 }, ['Apple', 'Grape']],
    [
      'indexed _in with unindexed = and _like',
      { status_in: ['new', 'paid'], region: 'EU', note_like: 'r' },
      ['Apple', 'Elder', 'Grape'],
    ],
    ['indexed range with a boolean', { price_start: 1, flag: true }, ['Apple', 'cherry', 'fig']],
    [
      'range and _in on one indexed field',
      { qty_start: 0, qty_end: 7, qty_in: [5, 7, 12] },
      ['Apple', 'Elder', 'Grape', 'fig'],
    ],
    ['contradicting equalities', { qty: 5, qty_in: [7] }, []],
  ])('%s', async (_label, filter, expected) => {
    expect(await namesFor(filter)).toEqual(expected);
  });
});

describe('where', () => {
  it.each([
    ['$gt and $lt on one field', { qty: { $gt: 0, $lt: 7 } }, ['Apple', 'Elder', 'Grape']],
    [
      'nested $or with $and',
      { $or: [{ status: 'paid' }, { $and: [{ flag: true }, { price: { $gte: 100 } }] }] },
      ['Elder', 'apricot', 'cherry', 'fig'],
    ],
    [
      '$and of $or',
      { $and: [{ $or: [{ qty: 5 }, { qty: 7 }] }, { $or: [{ region: 'US' }, { flag: false }] }] },
      ['Grape', 'fig'],
    ],
    ['$startWith, case-insensitive', { name: { $startWith: 'a' } }, ['Apple', 'apricot']],
    ['$endWith, case-insensitive', { name: { $endWith: 'E' } }, ['Apple', 'Date', 'Grape']],
    ['$contain', { note: { $contain: 'RED' } }, ['Apple', 'Grape', 'cherry']],
    ['$ne includes nulls', { status: { $ne: 'new' } }, ['Banana', 'Date', 'Elder', 'apricot', 'fig']],
    ['$notNull false', { region: { $notNull: false } }, ['Date']],
    ['$notNull true', { qty: { $notNull: true }, price: { $lte: 0 } }, ['Banana', 'apricot']],
    ['$in with coercion', { qty: { $in: ['5', 0] } }, ['Apple', 'Banana', 'Elder', 'Grape']],
    ['$eq null', { status: { $eq: null } }, ['Date']],
    ['plain value is $eq', { due: '2024-01-10' }, ['Apple', 'Date']],
    ['$lte on a date', { due: { $lte: '2024-01-09' } }, ['Banana', 'Grape']],
  ])('%s', async (_label, where, expected) => {
    expect(await namesFor({ where })).toEqual(expected);
  });

  it('combines with the suffix filters', async () => {
    expect(await namesFor({ where: { qty: { $lte: 0 } }, status: 'shipped' })).toEqual(['Banana']);
  });
});

describe('select', () => {
  it('narrows tableData and tableColumns to id and the selected fields', async () => {
    const res = await harness.getList('items', { select: ['qty', 'name'], name: 'Apple' });
    expect(res.body.data.tableData).toEqual([{ id: ids.Apple, name: 'Apple', qty: 5 }]);
    expect(res.body.data.tableColumns).toEqual([
      { title: 'id', dataIndex: 'id' },
      { title: 'Name', dataIndex: 'name' },
      { title: 'qty', dataIndex: 'qty' },
    ]);
  });

  it('can select system fields and json fields', async () => {
    const res = await harness.getList('items', { select: ['meta', 'gmt_create'], name: 'Banana' });
    expect(res.body.data.tableData).toEqual([{ id: ids.Banana, meta: [1, 2], gmt_create: expect.any(String) }]);
  });

  it('returns every field without select, in definition order', async () => {
    const res = await harness.getList('items', { name: 'Date' });
    expect(Object.keys(res.body.data.tableData[0])).toEqual([
      'id',
      'name',
      'qty',
      'price',
      'status',
      'due',
      'region',
      'note',
      'flag',
      'at',
      'meta',
      'gmt_create',
      'gmt_modified',
    ]);
    expect(res.body.data.tableData[0]).toMatchObject({ qty: null, price: 3.75, status: null, meta: null });
  });
});

describe('after an update, filters see the new values', () => {
  it('moves a record between index values and clears the lower-cased shadow', async () => {
    const created = await harness.create('items', { name: 'Kiwi', qty: 1, status: 'new', note: 'GREEN' });
    const id = created.body.data.id;
    expect(await namesFor({ note_like: 'green' })).toEqual(['Kiwi']);
    await harness.update('items', { id, qty: 99, status: null, note: 'brown' });
    expect(await namesFor({ qty: 1 })).toEqual([]);
    expect(await namesFor({ qty: 99 })).toEqual(['Kiwi']);
    expect(await namesFor({ status_is_null: true })).toEqual(['Date', 'Kiwi']);
    expect(await namesFor({ note_like: 'green' })).toEqual([]);
    expect(await namesFor({ note_like: 'BROWN' })).toEqual(['Kiwi']);
    await harness.update('items', { id, name: 'Kiwi-gone', qty: null });
    expect(await namesFor({ name_like: 'kiwi' })).toEqual(['Kiwi-gone']);
    expect(await namesFor({ qty_is_null: true })).toEqual(['Date', 'Kiwi-gone']);
  });
});

describe('1001 for what a filter cannot say', () => {
  it.each([
    ['an unknown field', { colour: 'red' }, 'colour'],
    ['an unknown suffix', { name_between: 'a' }, 'name_between'],
    ['_in on a boolean', { flag_in: [true] }, 'flag_in'],
    ['_start on a text', { note_start: 'a' }, 'note_start'],
    ['_end on an enum', { status_end: 'new' }, 'status_end'],
    ['_like on an integer', { qty_like: '1' }, 'qty_like'],
    ['_like on a boolean', { flag_like: 't' }, 'flag_like'],
    ['equality on a json field', { meta: 'x' }, 'meta'],
    ['_in on a json field', { meta_in: ['x'] }, 'meta_in'],
    ['a non-numeric integer', { qty: 'abc' }, 'qty'],
    ['a decimal for an integer', { qty_start: 1.5 }, 'qty_start'],
    ['an empty _in', { qty_in: [] }, 'qty_in'],
    ['_in that is not an array', { qty_in: '5' }, 'qty_in'],
    ['a bad value inside _in', { status_in: ['new', 'lost'] }, 'status_in[1]'],
    ['an enum value outside the options', { status: 'lost' }, 'status'],
    ['an invalid date', { due: '2024-13-01' }, 'due'],
    ['an invalid datetime', { at_start: '2024-01-01' }, 'at_start'],
    ['_is_null that is not a boolean', { flag_is_null: 'yes' }, 'flag_is_null'],
    ['a null value', { name: null }, 'name'],
    ['_like that is not a string', { name_like: 5 }, 'name_like'],
    ['_like on id', { id_like: 'x' }, 'id_like'],
    ['where that is not an object', { where: 'qty > 1' }, 'where'],
    ['an unknown where operator', { where: { qty: { $regex: '1' } } }, 'where.qty.$regex'],
    ['an unknown logical operator', { where: { $xor: [] } }, 'where.$xor'],
    ['an empty $or', { where: { $or: [] } }, 'where.$or'],
    ['an unknown where field', { where: { nope: 1 } }, 'where.nope'],
    ['$gt on a boolean', { where: { flag: { $gt: true } } }, 'where.flag.$gt'],
    ['$contain on a number', { where: { price: { $contain: '1' } } }, 'where.price.$contain'],
    ['$in on a boolean', { where: { flag: { $in: [true] } } }, 'where.flag.$in'],
    ['a malformed value deep in where', { where: { $and: [{ $or: [{ qty: 'x' }] }] } }, 'where.$and[0].$or[0].qty'],
    ['select of an unknown field', { select: ['nope'] }, 'select[0]'],
    ['an empty select', { select: [] }, 'select'],
    ['a sort direction other than asc/desc', { ytSortList: [{ name: 'up' }] }, 'ytSortList[0].name'],
    ['a sort on an unknown field', { ytSortList: [{ nope: 'asc' }] }, 'ytSortList[0].nope'],
    ['a sort entry with two fields', { ytSortList: [{ name: 'asc', qty: 'desc' }] }, 'ytSortList[0]'],
    ['a sort list that is not an array', { ytSortList: 'name' }, 'ytSortList'],
    ['pageSize 0', { pageSize: 0 }, 'pageSize'],
    ['pageSize not an integer', { pageSize: 2.5 }, 'pageSize'],
    ['currentPage below 1', { currentPage: 0 }, 'currentPage'],
    ['currentPage as text', { currentPage: 'two' }, 'currentPage'],
  ])('%s', async (_label, paramMap, key) => {
    const res = await harness.getList('items', paramMap);
    expectFailure(res, 1001);
    expect(res.body.errorMsg).toContain(key);
  });

  it('answers with a message that says what is wrong', async () => {
    const res = await harness.getList('items', { flag_in: [true] });
    expect(res.body.errorMsg).toBe("flag_in: _in is not supported for the boolean field 'flag'");
    const value = await harness.getList('items', { qty: 'abc' });
    expect(value.body.errorMsg).toBe("qty: field 'qty' expects an integer");
  });
});

describe('string comparisons answer as DynamoDB does', () => {
  // DynamoDB orders strings by their UTF-8 bytes, which is code point order. UTF-16 code units order the characters
  // above U+FFFF (stored as surrogates, D800–DFFF) before U+E000–U+FFFF instead, so a store that compares code
  // units answers ranges across that boundary differently. In code point order, as the list is written:
  const WORDS = ['', 'a', 'z', 'é', '\ud7ff', '\ue000', '\uff5e', '\ufffd', '𝄞', '😀', '🙂', '🙂x'];

  beforeAll(async () => {
    for (const word of WORDS) {
      expect((await harness.create('texts', { word, label: word })).body.success).toBe(true);
    }
    expect((await harness.create('texts', {})).body.success).toBe(true);
  });

  /** The labels a list answers, in code point order (nulls first); the same filter on `word` and on `label`. */
  async function matching(filters: (field: string) => Record<string, unknown>): Promise<unknown[]> {
    const answers = [];
    for (const field of ['word', 'label']) {
      const res = await harness.getList('texts', { ...filters(field), ytSortList: [{ label: 'asc' }], pageSize: 100 });
      expect(res.body).toMatchObject({ success: true });
      answers.push(res.body.data.tableData.map((row: { label: string | null }) => row.label));
    }
    expect(answers[0]).toEqual(answers[1]);
    return answers[1] as unknown[];
  }

  it('compares ranges by code point, on an indexed field and an unindexed one', async () => {
    expect(await matching((f) => ({ [`${f}_start`]: '🙂' }))).toEqual(['🙂', '🙂x']);
    expect(await matching((f) => ({ [`${f}_end`]: '🙂' }))).toEqual(WORDS.slice(0, 11));
    expect(await matching((f) => ({ [`${f}_start`]: '\ue000' }))).toEqual(WORDS.slice(5));
    expect(await matching((f) => ({ [`${f}_start`]: '\ufffd', [`${f}_end`]: '😀' }))).toEqual(['\ufffd', '𝄞', '😀']);
    expect(await matching((f) => ({ where: { [f]: { $gt: '\ufffd' } } }))).toEqual(['𝄞', '😀', '🙂', '🙂x']);
    expect(await matching((f) => ({ where: { [f]: { $lt: '𝄞' } } }))).toEqual(WORDS.slice(0, 8));
    expect(await matching((f) => ({ where: { [f]: { $gte: '😀', $lte: '🙂' } } }))).toEqual(['😀', '🙂']);
  });

  it('reads an index range whose bounds order differently by code unit, in either direction', async () => {
    // '\ufffd' < '😀' by code point, but not by UTF-16 code unit.
    const range = { word_start: '\ufffd', word_end: '😀' };
    const desc = await harness.getList('texts', { ...range, ytSortList: [{ word: 'desc' }] });
    const asc = await harness.getList('texts', { ...range, ytSortList: [{ word: 'asc' }] });
    expect(
      [desc.body.data.tableData, asc.body.data.tableData].map((rows) => rows.map((r: { word: string }) => r.word)),
    ).toEqual([
      ['😀', '𝄞', '\ufffd'],
      ['\ufffd', '𝄞', '😀'],
    ]);
    // Id bounds out of order by code point select nothing; in order by code point, no generated id lies between.
    for (const ids of [
      { id_start: '😀', id_end: '\ufffd' },
      { id_start: '\ufffd', id_end: '😀' },
    ]) {
      const res = await harness.getList('texts', ids);
      expect(res.body).toMatchObject({ success: true, data: { paging: { totalCount: 0 }, tableData: [] } });
    }
  });

  it('matches the empty string with _in and $in, as with equality', async () => {
    expect(await matching((f) => ({ [`${f}_in`]: [''] }))).toEqual(['']);
    expect(await matching((f) => ({ [`${f}_in`]: ['', 'z'] }))).toEqual(['', 'z']);
    expect(await matching((f) => ({ where: { [f]: { $in: [''] } } }))).toEqual(['']);
    expect(await matching((f) => ({ [f]: '' }))).toEqual(['']);
    expect(await matching((f) => ({ [`${f}_is_null`]: true }))).toEqual([null]);
  });

  it('sorts by code point', async () => {
    const res = await harness.getList('texts', { ytSortList: [{ word: 'desc' }], pageSize: 100 });
    expect(res.body.data.tableData.map((row: { word: string | null }) => row.word)).toEqual([
      ...[...WORDS].reverse(),
      null,
    ]);
  });
});
