/**
 * The embedded DynamoDB-compatible store of local runs and tests: dynalite, in this process, with the tables
 * created from the shared definitions (the same ones the CDK stack deploys) by storage/table-setup.ts.
 *
 * dynalite reads every Query and Scan through a stream over a LevelDB iterator that it never closes (its stream's
 * `destroy` calls an `iterator.return` the pinned abstract-level iterators do not have). An open iterator holds a
 * snapshot of the store, so LevelDB keeps every write buffer since in memory (and the in-memory store every tree
 * version): `npm start` held 1.8 GB after a load of 100,000 records, 0.3 GB once they are closed. The store's
 * streams are replaced here by ones that close their iterator when they end or are abandoned.
 *
 * LevelDB maps every table file it holds open into memory to read it, and holds up to 1,000 open (classic-level's
 * default `maxOpenFiles`): a store of 1,000,000 records had 864 MiB of table files mapped and resident, more than
 * the service's own memory. A store in a data directory is opened here with at most STORE_OPEN_FILES open files, so
 * at most that many tables of about 2 MiB are mapped; a table read after its file was closed is opened again
 * (docs/performance.md "At scale" has what that costs).
 */
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { endpointClientConfig } from '../../shared/aws/dynamodb';
import { type DynaliteStore, EmbeddedStream } from './embedded-stream';

export interface EmbeddedDynamo {
  endpoint: string;
  client: DynamoDBClient;
  /** The embedded store's stream of the tables asked for (none for another endpoint: it has its own). */
  stream?: EmbeddedStream;
  close(): Promise<void>;
}

/** dynalite's store module: `create` makes the store a server serves (the stream twin wraps it). */
const dynaliteStore = require('dynalite/db') as { create(options: object): DynaliteStore };

/**
 * The most files a store in a data directory holds open (LevelDB keeps 10 of them for its own logs and manifest, so
 * up to 190 table files, about 380 MiB at most, are mapped).
 */
export const STORE_OPEN_FILES = 200;

/** The part of a LevelDB store opened here before dynalite's own deferred open (which then finds it opening). */
interface OpenableStore {
  open(options: { maxOpenFiles: number }): Promise<void>;
}

/** The parts of a LevelDB store (abstract-level) that dynalite reads its ranges through. */
interface RangeIterator {
  next(): Promise<unknown>;
  close(): Promise<void>;
}
interface RangeReadable {
  keys(options?: object): RangeIterator;
  values(options?: object): RangeIterator;
  createKeyStream?(options?: object): Readable;
  createValueStream?(options?: object): Readable;
}

/** A stream of an iterator's entries that closes the iterator once it ends, fails or is abandoned. */
function closingStream(iterator: RangeIterator): Readable {
  return new Readable({
    objectMode: true,
    read() {
      iterator.next().then(
        (entry) => this.push(entry === undefined ? null : entry),
        (error: Error) => this.destroy(error),
      );
    },
    destroy(error, callback) {
      iterator.close().then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}

/** Make the store's range streams close their iterators (the module header says why). */
function closeRangeIterators(db: RangeReadable): void {
  db.createKeyStream = (options) => closingStream(db.keys(options));
  db.createValueStream = (options) => closingStream(db.values(options));
}

/**
 * Start dynalite on a loopback port; `dataDir` persists the store, without it the store lives in memory. The
 * tables named in `streamedTables` get a stream (embedded-stream.ts).
 */
export async function startEmbeddedDynamo(
  dataDir?: string,
  streamedTables: readonly string[] = [],
  maxOpenFiles = STORE_OPEN_FILES,
): Promise<EmbeddedDynamo> {
  const create = dynaliteStore.create;
  let stream: EmbeddedStream | undefined;
  let opening: Promise<void> | undefined;
  dynaliteStore.create = (options: object) => {
    const store = create(options);
    if (dataDir) opening = (store.db as unknown as OpenableStore).open({ maxOpenFiles });
    closeRangeIterators(store.db as unknown as RangeReadable);
    stream = new EmbeddedStream(store, new Set(streamedTables));
    return store;
  };
  let server: ReturnType<typeof dynalite>;
  try {
    server = dynalite({ path: dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  } finally {
    dynaliteStore.create = create;
  }
  // A store that cannot be opened (another process holds its directory) fails the start with LevelDB's reason.
  try {
    await opening;
  } catch (error) {
    const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    throw new Error(
      /\block\b/i.test(reason)
        ? `The store in ${dataDir} is in use by another process (${reason}): stop it or use another directory.`
        : `The store in ${dataDir} cannot be opened: ${reason}`,
    );
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    endpoint,
    client,
    ...(stream ? { stream } : {}),
    close: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Where a DynamoDB endpoint other than the embedded store is (`npm start -- --dynamodb-endpoint`). */
export interface ExternalDynamoOptions {
  endpoint: string;
  /** The region to sign requests for (AWS_REGION; `local` without it). */
  region: string;
  /** Whether AWS credentials are configured; placeholder ones are used otherwise (emulators accept them). */
  credentialsConfigured: boolean;
}

/** A client of another DynamoDB endpoint (moto, DynamoDB Local, AWS): nothing to start, nothing to stop but the client. */
export function connectDynamo(options: ExternalDynamoOptions): EmbeddedDynamo {
  const client = new DynamoDBClient(
    endpointClientConfig(options.endpoint, options.region, options.credentialsConfigured),
  );
  return {
    endpoint: options.endpoint,
    client,
    close: async () => client.destroy(),
  };
}
