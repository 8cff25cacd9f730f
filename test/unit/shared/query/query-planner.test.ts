/** The planner's choice of access path, residual and order source, for the cases that decide cost. */
import { type Dataset, toDataset } from '../../../../shared/catalog/catalog';
import type { FieldConfig } from '../../../../shared/catalog/schema';
import { parseListParams } from '../../../../shared/query/list-params';
import { planListQuery } from '../../../../shared/query/query-planner';
import { encodeIndexKey } from '../../../../shared/records/value-encoding';
import { indexLayout } from '../../../../shared/storage/index-attributes';

const FIELDS: FieldConfig[] = [
  { name: 'name', type: 'string', indexed: true },
  { name: 'qty', type: 'integer', indexed: true },
  { name: 'status', type: 'enum', options: ['new', 'paid'], indexed: true },
  { name: 'region', type: 'string' },
  { name: 'note', type: 'text' },
];
const DATASET: Dataset = toDataset({ datasetCode: 'orders', appCode: 'app', name: 'orders', fields: FIELDS });

function plan(params: Record<string, unknown>) {
  const parsed = parseListParams(params, DATASET);
  return planListQuery({ filter: parsed.filter, sort: parsed.sort, offset: 0, limit: 20 }, indexLayout(DATASET));
}

describe('planListQuery', () => {
  it('reads the partition newest first for an unfiltered list, total from the counter', () => {
    expect(plan({})).toMatchObject({
      path: { kind: 'partition', direction: 'desc' },
      order: 'path',
      unfiltered: true,
      residual: { op: 'and', items: [] },
    });
  });

  it('serves an unfiltered sort on an indexed field from its index, in order', () => {
    expect(plan({ ytSortList: [{ qty: 'asc' }] })).toMatchObject({
      path: {
        kind: 'index',
        indexName: 'gsi2',
        attribute: '@ix2',
        tag: 'b2:',
        field: 'qty',
        direction: 'asc',
        intervals: [{ lower: '0', upper: '2' }],
      },
      order: 'path',
      unfiltered: true,
    });
  });

  it('sorts in memory for an unindexed sort, and names the field', () => {
    expect(plan({ ytSortList: [{ region: 'desc' }] })).toMatchObject({
      path: { kind: 'partition' },
      order: 'items',
      unindexedFields: ['region'],
    });
  });

  it('answers an indexed equality from the index, ordered by id with keys only', () => {
    const p = plan({ status: 'paid' });
    expect(p.path).toEqual({
      kind: 'index',
      indexName: 'gsi3',
      attribute: '@ix3',
      tag: 'b3:',
      field: 'status',
      intervals: [{ lower: '1paid\u0001', upper: '1paid\u0001\uffff' }],
      direction: 'desc',
    });
    expect(p.order).toBe('path');
    expect(p.residual).toEqual({ op: 'and', items: [] });
  });

  it('prefers an equality over a range, the range narrowing by its index keys', () => {
    const p = plan({ qty_start: 3, status: 'new' });
    expect(p.path).toMatchObject({ kind: 'index', field: 'status' });
    expect(p.served).toEqual([{ op: 'eq', field: { name: 'status', type: 'enum' }, value: 'new' }]);
    expect(p.intersections).toEqual([
      {
        path: expect.objectContaining({ kind: 'index', field: 'qty' }),
        served: [{ op: 'range', field: { name: 'qty', type: 'integer' }, lower: { value: 3, inclusive: true } }],
      },
    ]);
    expect(p.residual).toEqual({ op: 'and', items: [] });
  });

  it('turns _in into one interval per distinct value, in key order', () => {
    const p = plan({ qty_in: [7, -1, 7] });
    expect(p.path).toMatchObject({
      kind: 'index',
      field: 'qty',
      intervals: [
        { lower: `1${encodeIndexKey(-1, '').slice(1)}`, upper: `1${encodeIndexKey(-1, '').slice(1)}\uffff` },
        { lower: `1${encodeIndexKey(7, '').slice(1)}`, upper: `1${encodeIndexKey(7, '').slice(1)}\uffff` },
      ],
    });
    expect(p.order).toBe('ids');
  });

  it('intersects conditions on one indexed field into one interval and serves them all', () => {
    const p = plan({ qty_start: 1, qty_end: 5, ytSortList: [{ qty: 'desc' }] });
    expect(p.path).toMatchObject({ kind: 'index', field: 'qty', direction: 'desc' });
    expect(p.path.kind === 'index' && p.path.intervals).toHaveLength(1);
    expect(p.residual).toEqual({ op: 'and', items: [] });
    expect(p.order).toBe('path');
  });

  it('reads the partition with a filter for unindexed conditions', () => {
    expect(plan({ note_like: 'x', region: 'EU' })).toMatchObject({
      path: { kind: 'partition', direction: 'desc' },
      order: 'path',
      unfiltered: false,
      unindexedFields: ['note', 'region'],
    });
  });

  it('prefers the partition to a not-null index read when other conditions need the items anyway', () => {
    expect(plan({ qty_is_null: false, note_like: 'x' }).path).toEqual({ kind: 'partition', direction: 'desc' });
    expect(plan({ qty_is_null: false }).path).toMatchObject({ kind: 'index', field: 'qty' });
  });

  it('fetches ids directly for id and id_in', () => {
    expect(plan({ id_in: ['B', 'A', 'B'], qty: 1 })).toMatchObject({
      path: { kind: 'ids', ids: ['B', 'A'] },
      order: 'ids',
      residual: { op: 'and', items: [{ op: 'eq' }] },
    });
  });

  it('narrows the partition by an id range', () => {
    expect(plan({ id_start: 'A', id_end: 'M' }).path).toEqual({
      kind: 'partition',
      direction: 'desc',
      idRange: { lower: 'A', upper: 'M' },
    });
  });

  it('needs the items for a multi-key sort, the ids only when an equality pins the sort field', () => {
    expect(plan({ status: 'new', ytSortList: [{ qty: 'asc' }, { name: 'desc' }] }).order).toBe('items');
    expect(plan({ status: 'new', ytSortList: [{ status: 'asc' }] })).toMatchObject({ order: 'path' });
    expect(plan({ qty: 3, ytSortList: [{ qty: 'asc' }, { name: 'desc' }] })).toMatchObject({
      path: { kind: 'index', field: 'qty' },
      order: 'items',
    });
  });

  it('orders an indexed filter sorted by another indexed field through that field index', () => {
    expect(plan({ status: 'new', ytSortList: [{ qty: 'desc' }] })).toMatchObject({
      path: { kind: 'index', field: 'status', direction: 'desc' },
      order: 'items',
      sortPath: {
        kind: 'index',
        field: 'qty',
        indexName: 'gsi2',
        direction: 'desc',
        intervals: [{ lower: '0', upper: '2' }],
      },
      residual: { op: 'and', items: [] },
      unindexedFields: [],
    });
    // Two sort keys: the index lists the first only.
    expect(plan({ status: 'new', ytSortList: [{ qty: 'desc' }, { name: 'asc' }] }).sortPath).toBeUndefined();
    // The filter's own field, or an index path that serves the order already: nothing to add.
    expect(plan({ qty_start: 2, ytSortList: [{ qty: 'asc' }] })).toMatchObject({ order: 'path' });
    expect(plan({ qty_start: 2, ytSortList: [{ qty: 'asc' }] }).sortPath).toBeUndefined();
  });

  it('names an unindexed sort field of an indexed filter, and never a system field', () => {
    expect(plan({ status: 'new', ytSortList: [{ region: 'asc' }] })).toMatchObject({
      path: { kind: 'index', field: 'status' },
      order: 'items',
      unindexedFields: ['region'],
    });
    expect(plan({ status: 'new', ytSortList: [{ gmt_modified: 'asc' }] }).unindexedFields).toEqual([]);
  });

  it('prefers the candidate that also serves the sort when selectivity ties', () => {
    expect(plan({ qty_start: 1, name_start: 'a', ytSortList: [{ name: 'asc' }] }).path).toMatchObject({
      kind: 'index',
      field: 'name',
      direction: 'asc',
    });
  });

  it('keeps a condition on a long value in the residual (the index key is truncated)', () => {
    const long = 'x'.repeat(300);
    const p = plan({ name: long });
    expect(p.path).toMatchObject({ kind: 'index', field: 'name' });
    expect(p.residual).toMatchObject({ op: 'and', items: [{ op: 'eq', value: long }] });
  });

  it('narrows by the keys of other indexed equalities instead of reading items', () => {
    const p = plan({ status: 'new', qty: 7, region: 'EU' });
    expect(p.path).toMatchObject({ kind: 'index', field: 'qty' });
    expect(p.intersections).toEqual([
      {
        path: expect.objectContaining({ kind: 'index', field: 'status' }),
        served: [{ op: 'eq', field: { name: 'status', type: 'enum' }, value: 'new' }],
      },
    ]);
    expect(p.residual).toEqual({
      op: 'and',
      items: [{ op: 'eq', field: { name: 'region', type: 'string' }, value: 'EU' }],
    });
  });

  it('keeps OR trees in the residual', () => {
    const p = plan({ where: { $or: [{ qty: 1 }, { region: 'EU' }] } });
    expect(p.path).toEqual({ kind: 'partition', direction: 'desc' });
    expect(p.residual).toMatchObject({ op: 'and', items: [{ op: 'or' }] });
  });
});
