/**
 * The catalog a request sees: read from the catalog table, cached in the container for a short time, and
 * served from the last good copy (for a bounded time) when a refresh fails.
 */
import { Catalog } from './catalog';
import type { FunctionVersions } from './function-versions';
import type { IndexRegistry } from './index-registry';
import type { CatalogConfig } from './schema';

/** What a deployment stored: the configuration, the versions of its backend functions and its indexes. */
export interface DeployedCatalog {
  config: CatalogConfig;
  functionVersions: FunctionVersions;
  indexes: IndexRegistry;
  /** When it was deployed (epoch ms): a webhook a receiver disabled stays disabled until a later deploy. */
  deployedAt?: number;
}

/** How long a container serves its copy of the catalog before reading it again. */
export const CATALOG_TTL_MS = 60_000;

/**
 * The oldest copy a container serves while reading a new one fails: twice its cache time. Bounded tightly: a
 * configuration change is only complete once no function serves the configuration before it (an index build
 * waits for that, see shared/indexing/), and a revoked key stops working within this time.
 */
export function maxStaleFor(ttlMs: number): number {
  return 2 * ttlMs;
}

export interface CatalogProvider {
  current(): Promise<Catalog>;
}

export interface CachedCatalogOptions {
  /** The deployed catalog, or a configuration alone (which then has no function versions). */
  load: () => Promise<DeployedCatalog | CatalogConfig | undefined>;
  ttlMs?: number;
  maxStaleMs?: number;
  now?: () => number;
}

export class CachedCatalogProvider implements CatalogProvider {
  private cached: { catalog: Catalog; loadedAt: number } | undefined;
  private pending: Promise<Catalog> | undefined;
  private readonly ttl: number;
  private readonly maxStale: number;
  private readonly now: () => number;

  constructor(private readonly options: CachedCatalogOptions) {
    this.ttl = options.ttlMs ?? CATALOG_TTL_MS;
    this.maxStale = options.maxStaleMs ?? maxStaleFor(this.ttl);
    this.now = options.now ?? Date.now;
  }

  async current(): Promise<Catalog> {
    const cached = this.cached;
    const age = cached ? this.now() - cached.loadedAt : Number.POSITIVE_INFINITY;
    if (cached && age < this.ttl) return cached.catalog;
    try {
      return await this.refresh();
    } catch (error) {
      if (cached && age < this.maxStale) return cached.catalog;
      throw error;
    }
  }

  private refresh(): Promise<Catalog> {
    this.pending ??= this.options
      .load()
      .then((loaded) => {
        if (!loaded) throw new Error('no catalog has been deployed');
        const catalog =
          'config' in loaded
            ? new Catalog(loaded.config, loaded.functionVersions, loaded.deployedAt, loaded.indexes)
            : new Catalog(loaded);
        this.cached = { catalog, loadedAt: this.now() };
        return catalog;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}

/** A fixed catalog, for tools and unit tests that hold a configuration in hand. */
export class StaticCatalogProvider implements CatalogProvider {
  private readonly catalog: Catalog;
  constructor(config: CatalogConfig) {
    this.catalog = new Catalog(config);
  }
  async current(): Promise<Catalog> {
    return this.catalog;
  }
}
