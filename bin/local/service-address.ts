/**
 * Where the local service `npm start` runs, recorded so that `das call` and `npm run sign` in the same checkout
 * reach it whatever `--port` it was given. The last server started wins; when it stops it puts back the record it
 * replaced if that server still runs (a second server, a test's, never leaves the first one unreachable), and
 * otherwise removes its record. A record whose process is gone is ignored.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** In the checkout's node_modules cache: per checkout, never committed. `DAS_LOCAL_SERVICE_FILE` moves it. */
export function serviceAddressFile(): string {
  return (
    process.env.DAS_LOCAL_SERVICE_FILE ||
    path.join(__dirname, '..', '..', 'node_modules', '.cache', 'data-access-service', 'local-service.json')
  );
}

/** Where the local service keeps its data: `das webhooks` reads and writes it there. */
export interface LocalStoreAddress {
  endpoint: string;
  region: string;
  /** Whether the endpoint takes the environment's credentials (another endpoint), or placeholder ones. */
  credentialsConfigured: boolean;
  tables: { catalog: string; events: string };
}

interface ServiceRecord {
  url: string;
  pid: number;
  store?: LocalStoreAddress;
  /** Where its custom SQL runs, when on MySQL (`das sql status` reads the mirror there). */
  sqlEngine?: string;
}

export function recordLocalServiceUrl(url: string, store?: LocalStoreAddress, sqlEngine?: string): () => void {
  const file = serviceAddressFile();
  const replaced = readRecord(file);
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    // Readable by its owner only: a MySQL engine's URL holds its password.
    writeFileSync(
      file,
      `${JSON.stringify({ url, pid: process.pid, ...(store ? { store } : {}), ...(sqlEngine ? { sqlEngine } : {}) })}\n`,
      { mode: 0o600 },
    );
  } catch {
    // A read-only checkout: the banner's `export DAS_URL=…` line still says where the service is.
    return () => undefined;
  }
  return () => {
    if (readRecord(file)?.pid !== process.pid) return;
    if (replaced && replaced.pid !== process.pid && isRunning(replaced.pid)) {
      writeFileSync(file, `${JSON.stringify(replaced)}\n`);
    } else {
      rmSync(file, { force: true });
    }
  };
}

function readRecord(file: string): ServiceRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as {
      url?: unknown;
      pid?: unknown;
      store?: unknown;
      sqlEngine?: unknown;
    };
    if (typeof record.url === 'string' && typeof record.pid === 'number') {
      const store = record.store as Partial<LocalStoreAddress> | undefined;
      const valid =
        typeof store?.endpoint === 'string' &&
        typeof store.region === 'string' &&
        typeof store.tables?.catalog === 'string' &&
        typeof store.tables.events === 'string';
      return {
        url: record.url,
        pid: record.pid,
        ...(valid ? { store: store as LocalStoreAddress } : {}),
        ...(typeof record.sqlEngine === 'string' ? { sqlEngine: record.sqlEngine } : {}),
      };
    }
  } catch {
    // No record, or a half-written one: no local service to point at.
  }
  return undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The URL of the running local service, if one recorded itself and is still alive. */
export function readLocalServiceUrl(): string | undefined {
  const record = readRecord(serviceAddressFile());
  return record && isRunning(record.pid) ? record.url : undefined;
}

/** The MySQL engine of the running local service, when its custom SQL runs there. */
export function readLocalSqlEngine(): string | undefined {
  const record = readRecord(serviceAddressFile());
  return record && isRunning(record.pid) ? record.sqlEngine : undefined;
}

/** Where the running local service keeps its data, if one recorded itself and is still alive. */
export function readLocalStore(): LocalStoreAddress | undefined {
  const record = readRecord(serviceAddressFile());
  return record && isRunning(record.pid) ? record.store : undefined;
}
