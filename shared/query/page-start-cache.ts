/**
 * Where each page of an unfiltered list starts, kept in the container, so that page N+1 reads one page
 * instead of re-reading pages 1..N. Keyed by dataset, order and the record offset the page starts at (so
 * page sizes can differ between requests).
 *
 * An entry stores the dataset's record count when it was made. Records are never deleted and updates do not
 * move a record in id order, so while the count is unchanged the set of ids, and so every record's position,
 * is unchanged: an entry whose count differs from the current one is stale and ignored. Only id-ordered
 * reads are cached for that reason; index orders move when a value is updated.
 */
import type { ReadPosition } from '../storage/query-pages';

interface PageStart {
  recordCount: number;
  position: ReadPosition;
}

/** Enough for thousands of pages across a container's datasets, small next to a function's memory. */
const DEFAULT_CAPACITY = 2000;

export class PageStartCache {
  private readonly entries = new Map<string, PageStart>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  private static key(datasetCode: string, order: string, offset: number): string {
    return `${datasetCode}\u0000${order}\u0000${offset}`;
  }

  /** Where the record at `offset` starts, if known for this record count. */
  get(datasetCode: string, order: string, offset: number, recordCount: number): ReadPosition | undefined {
    const key = PageStartCache.key(datasetCode, order, offset);
    const entry = this.entries.get(key);
    if (!entry || entry.recordCount !== recordCount) return undefined;
    // Refresh its place in the eviction order (least recently used goes first).
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.position;
  }

  set(datasetCode: string, order: string, offset: number, recordCount: number, position: ReadPosition): void {
    const key = PageStartCache.key(datasetCode, order, offset);
    this.entries.delete(key);
    this.entries.set(key, { recordCount, position });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}

/** The container's cache. */
export const pageStartCache = new PageStartCache();
