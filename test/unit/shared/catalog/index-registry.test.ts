/**
 * Which builds' per-value totals may answer a list: only those that count every record, i.e. complete since the
 * moment they were made. A build whose job indexed stored records has counts of the later writes only.
 */
import { type DatasetIndexRegistry, datasetIndexes } from '../../../../shared/catalog/index-registry';

const entry: DatasetIndexRegistry = {
  nextBuild: 6,
  indexes: [
    { field: 'customer', build: 1, slot: 1, state: 'complete', since: 0, settlesAt: 0, finishedAt: 0 },
    // Built by a job over stored records, then complete.
    { field: 'items', build: 4, slot: 2, state: 'complete', since: 50, settlesAt: 50, startedAt: 20, finishedAt: 50 },
    { field: 'region', build: 5, slot: 3, state: 'building', since: 60, settlesAt: 60, job: 'j1', startedAt: 61 },
    { field: 'amount', build: 2, slot: 4, state: 'dropping', maintained: true, since: 60, settlesAt: 70 },
  ],
};

it('answers from totals only for builds complete from the start; writes keep totals of complete and building ones', () => {
  const indexes = datasetIndexes(entry);
  expect([...indexes.exactTotals]).toEqual([1]);
  expect(indexes.totalled.map((index) => index.build)).toEqual([1, 4, 5]);
  expect(indexes.maintained.map((index) => index.build)).toEqual([1, 4, 5, 2]);
  expect([...indexes.queryable.keys()]).toEqual(['customer', 'items']);
});
