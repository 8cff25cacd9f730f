/**
 * The configuration checks of `relations` (docs/interface.md §21), through the schema as a file is loaded: a known
 * dataset, a field of the dataset holding ids, a name that is no field's; cycles are accepted.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, parseConfig } from '../../../../shared/catalog-store/load-config';
import { FIXTURES_DIR } from '../../../support/paths';

type Loose = {
  datasets: { datasetCode: string; fields: { name: string; type: string }[]; relations?: unknown[] }[];
};

function problemsOf(mutate: (config: Loose) => void) {
  const value = JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'relations-config.json'), 'utf8')) as Loose;
  mutate(value);
  try {
    parseConfig(value);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const orders = (config: Loose) => config.datasets[1] as Loose['datasets'][number];

describe('relations in the configuration', () => {
  it('are accepted as the fixture declares them, and in a cycle', () => {
    expect(problemsOf(() => {})).toEqual([]);
    expect(
      problemsOf((c) => {
        (c.datasets[0] as Loose['datasets'][number]).fields.push({ name: 'last_order', type: 'string' });
        (c.datasets[0] as Loose['datasets'][number]).relations = [
          { name: 'lastOrder', field: 'last_order', dataset: 'orders' },
        ];
      }),
    ).toEqual([]);
  });

  it('refuse an unknown dataset and an unknown field, by path', () => {
    expect(
      problemsOf((c) => {
        orders(c).relations = [{ name: 'buyer', field: 'buyer_id', dataset: 'people' }];
      }),
    ).toEqual([
      { path: 'datasets[1].relations[0].field', message: "unknown field 'buyer_id' of dataset 'orders'" },
      { path: 'datasets[1].relations[0].dataset', message: "unknown dataset 'people'" },
    ]);
  });

  it('refuse a name that is a field, a system field or another relation', () => {
    expect(
      problemsOf((c) => {
        orders(c).relations = [
          { name: 'item', field: 'customer_id', dataset: 'customers' },
          { name: 'id', field: 'customer_id', dataset: 'customers' },
          { name: 'customer', field: 'customer_id', dataset: 'customers' },
          { name: 'customer', field: 'customer_id', dataset: 'customers' },
        ];
      }),
    ).toEqual([
      {
        path: 'datasets[1].relations[0].name',
        message: "relation 'item' has the name of a field of dataset 'orders'; give it another name",
      },
      {
        path: 'datasets[1].relations[1].name',
        message: "'id' is a system field's name; give the relation another name",
      },
      { path: 'datasets[1].relations[3].name', message: "duplicate relation 'customer'" },
    ]);
  });

  it('refuse a field that cannot hold record ids', () => {
    expect(
      problemsOf((c) => {
        orders(c).relations = [{ name: 'customer', field: 'amount', dataset: 'customers' }];
      }),
    ).toEqual([
      {
        path: 'datasets[1].relations[0].field',
        message:
          "field 'amount' is of type number; a relation's field holds record ids, so it must be of type string or text",
      },
    ]);
  });

  it('refuse a relation missing a key or with one more', () => {
    const problems = problemsOf((c) => {
      orders(c).relations = [{ name: 'customer', field: 'customer_id', dataset: 'customers', depth: 2 }];
    });
    expect(problems.map((problem) => problem.path)).toEqual(['datasets[1].relations[0]']);
  });
});
