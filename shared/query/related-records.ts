/**
 * The related records of a list's records (docs/interface.md §21): for each relation, the distinct ids its field
 * holds, read with BatchGetItem (100 keys per call, unprocessed keys sent again, `ListReader.batchGet`) from the
 * related dataset, and kept only where the caller's grant on that dataset reaches the row. A link that is empty,
 * not an id, dangling (no such record) or outside the grant's rows has no related record: `null` in an answer.
 */
import type { Dataset } from '../catalog/catalog';
import type { RelationConfig } from '../catalog/schema';
import type { CapacityMeter } from '../observability/capacity-meter';
import { matchesFilter } from '../records/filter-matcher';
import type { Filter } from '../records/list-query';
import type { RecordItem } from '../records/record-codec';
import { normalizeRecordId } from '../records/record-ids';
import type { ListReader, ReadGuard } from '../storage/list-reader';

/** A relation of the listed dataset, as the caller may read its dataset. */
export interface RelatedScope {
  relation: RelationConfig;
  dataset: Dataset;
  /** The fields the caller's grant on the related dataset shows (undefined: all). */
  readable: ReadonlySet<string> | undefined;
  /** The rows it reaches (undefined: all). */
  rowScope: Filter | undefined;
}

/** The id a record links to through `relation`, when its field holds one. */
export function linkOf(item: RecordItem, relation: RelationConfig): string | undefined {
  const value = item[relation.field];
  return typeof value === 'string' && normalizeRecordId(value) === value ? value : undefined;
}

/** Related records already read in one request, per relation name and id (`null`: none the caller may read). */
export class RelatedRecords {
  private readonly byRelation = new Map<string, Map<string, RecordItem | null>>();

  constructor(
    private readonly reader: ListReader,
    private readonly meter: CapacityMeter,
    private readonly guard?: ReadGuard,
  ) {}

  /** Read what `items` link to through each scope that has not been read yet (one batch read per relation). */
  async load(items: readonly RecordItem[], scopes: readonly RelatedScope[]): Promise<void> {
    await Promise.all(scopes.map((scope) => this.loadOne(items, scope)));
  }

  /** The related record of `item` through `scope`, after `load`; undefined when there is none to show. */
  of(item: RecordItem, scope: RelatedScope): RecordItem | undefined {
    const id = linkOf(item, scope.relation);
    return id === undefined ? undefined : (this.byRelation.get(scope.relation.name)?.get(id) ?? undefined);
  }

  private async loadOne(items: readonly RecordItem[], scope: RelatedScope): Promise<void> {
    let known = this.byRelation.get(scope.relation.name);
    if (!known) {
      known = new Map();
      this.byRelation.set(scope.relation.name, known);
    }
    const wanted = new Set<string>();
    for (const item of items) {
      const id = linkOf(item, scope.relation);
      if (id !== undefined && !known.has(id)) wanted.add(id);
    }
    if (wanted.size === 0) return;
    const ids = [...wanted];
    const found = await this.reader.batchGet(scope.dataset.datasetCode, ids, this.meter, this.guard);
    for (const id of ids) {
      const record = found.get(id);
      known.set(id, record && (!scope.rowScope || matchesFilter(record, scope.rowScope)) ? record : null);
    }
  }
}
