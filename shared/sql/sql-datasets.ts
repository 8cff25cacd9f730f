/**
 * Which datasets registered queries can read: only their writes need to bump the dataset version that custom
 * SQL's cache is keyed by, so datasets no query reads pay nothing for it.
 */
import type { Catalog } from '../catalog/catalog';
import { referencedNames } from './sql-lexer';

const readBySql = new WeakMap<Catalog, ReadonlySet<string>>();

/** The codes of the datasets some registered query declares or names in its text. */
export function datasetsReadBySql(catalog: Catalog): ReadonlySet<string> {
  let codes = readBySql.get(catalog);
  if (!codes) {
    const known = new Map(catalog.allDatasets().map((d) => [d.datasetCode.toLowerCase(), d.datasetCode]));
    const found = new Set<string>();
    for (const query of catalog.config.queries ?? []) {
      for (const code of query.datasets ?? []) found.add(code);
      for (const name of referencedNames(query.sql)) {
        const code = known.get(name.toLowerCase());
        if (code) found.add(code);
      }
    }
    codes = found;
    readBySql.set(catalog, codes);
  }
  return codes;
}
