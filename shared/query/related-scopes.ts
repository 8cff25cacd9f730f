/**
 * A dataset's relations as one caller may use them on get-list (docs/interface.md §21): each related dataset
 * through the caller's own grant on it, exactly as if it listed that dataset. A relation whose dataset the caller
 * may not read stays named (so that a typo is told apart from a refusal): using it answers 1006 with the reason.
 */
import type { Caller } from '../access/caller';
import { grantFor, grantView } from '../access/permissions';
import type { Catalog, Dataset } from '../catalog/catalog';
import { AccessDeniedError } from '../contract/errors';
import type { RelatedAccess } from '../records/filter-parser';
import type { RelatedScope } from './related-records';

export interface RelatedScopes {
  /** What the parser resolves `<relation>.<field>` against. */
  access: ReadonlyMap<string, RelatedAccess>;
  /** The relations the caller may read, for the reads. */
  scopes: ReadonlyMap<string, RelatedScope>;
}

export function relatedScopes(catalog: Catalog, caller: Caller, dataset: Dataset): RelatedScopes {
  const access = new Map<string, RelatedAccess>();
  const scopes = new Map<string, RelatedScope>();
  for (const relation of dataset.relations.values()) {
    const related = catalog.dataset(relation.dataset);
    // The configuration's checks refuse a relation to an unknown dataset; one deployed before them is unusable.
    if (!related) continue;
    try {
      const view = grantView(grantFor(caller, related.datasetCode, 'read'), related);
      access.set(relation.name, view.readable ? { dataset: related, readable: view.readable } : { dataset: related });
      scopes.set(relation.name, { relation, dataset: related, readable: view.readable, rowScope: view.rowScope });
    } catch (error) {
      if (!(error instanceof AccessDeniedError)) throw error;
      access.set(relation.name, { dataset: related, denied: error.message });
    }
  }
  return { access, scopes };
}
