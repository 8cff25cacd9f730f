/** The catalog cache: refresh after its TTL, last good copy while the table fails, bounded staleness. */
import { CachedCatalogProvider } from '../../../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../../../shared/catalog/schema';

const config = (name: string): CatalogConfig => ({
  applications: [{ appCode: 'app-a', name }],
  datasets: [],
});

describe('CachedCatalogProvider', () => {
  it('loads once within the TTL, again after it, and keeps the last good copy for a bounded time', async () => {
    let clock = 0;
    const answers: (() => Promise<CatalogConfig | undefined>)[] = [
      async () => config('first'),
      async () => config('second'),
      async () => {
        throw new Error('table unavailable');
      },
      async () => {
        throw new Error('table unavailable');
      },
    ];
    let loads = 0;
    const provider = new CachedCatalogProvider({
      load: () => (answers[loads++] as () => Promise<CatalogConfig | undefined>)(),
      ttlMs: 1_000,
      maxStaleMs: 10_000,
      now: () => clock,
    });
    const name = async () => (await provider.current()).application('app-a')?.name;
    expect(await name()).toBe('first');
    clock = 999;
    expect(await name()).toBe('first');
    clock = 1_500;
    expect(await name()).toBe('second');
    clock = 5_000;
    expect(await name()).toBe('second');
    clock = 20_000;
    await expect(provider.current()).rejects.toThrow('table unavailable');
    expect(loads).toBe(4);
  });

  it('fails clearly when no catalog was deployed', async () => {
    const provider = new CachedCatalogProvider({ load: async () => undefined });
    await expect(provider.current()).rejects.toThrow('no catalog has been deployed');
  });
});
