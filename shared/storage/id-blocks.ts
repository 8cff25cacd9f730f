/**
 * Blocks of record ids chosen in one step: a time and an 80-bit random start, the ids being the ULIDs of that
 * time with the random part start, start + 1, ... — what a monotonic ULID factory hands out within one
 * millisecond. A block is a few bytes however many records it names, so an idempotency record can remember it
 * cheaply, and a retry can find which of its ids were written with one key-range read.
 *
 * The exact record count (record-counter.ts) counts a record created on its own by an entry keyed by its id,
 * and assumes that entry is written within the settle window of its key's time. A retry that writes ids of an
 * earlier block keeps that promise only inside the window: `blockStillWritable` says when a fresh block must be
 * chosen instead. (A batch's records are counted by a bulk group keyed when it is written, so for them the rule
 * only keeps ids close to the time they were written.)
 */
import { randomBytes } from 'node:crypto';
import { decodeTime, encodeTime } from 'ulid';
import { SETTLE_MS } from './record-counter';

export interface IdBlock {
  /** Milliseconds since the epoch: the ids' time and the records' gmt_create. */
  time: number;
  /** The random part of the first id: 16 Crockford base32 characters (80 bits). */
  start: string;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_CHARS = 16;

/**
 * The random part's characters, as one flat string: built from character codes, not a character at a time, since
 * a string grown by concatenation is held as a chain of pieces several times the size of its characters (a fold
 * holds every id of the batches it folds).
 */
function encodeRandom(value: bigint): string {
  return String.fromCharCode(...randomCodes(value));
}

/** A ULID with the time part of `id` (its first 10 characters) and the random part `random`, as one flat string. */
function ulidWithRandom(id: string, random: bigint): string {
  const codes: number[] = [];
  for (let i = 0; i < 10; i++) codes.push(id.charCodeAt(i));
  return String.fromCharCode(...codes, ...randomCodes(random));
}

function randomCodes(value: bigint): number[] {
  const codes = new Array<number>(RANDOM_CHARS);
  let rest = value;
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    codes[i] = CROCKFORD.charCodeAt(Number(rest & 31n));
    rest >>= 5n;
  }
  return codes;
}

function decodeRandom(text: string): bigint {
  let value = 0n;
  for (const char of text) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) throw new Error(`not a Crockford base32 digit: ${char}`);
    value = (value << 5n) | BigInt(digit);
  }
  return value;
}

/**
 * A new block at time `time`. The top bit of the random start is clear, so a block of up to 2^79 ids never
 * overflows into the next millisecond's ids.
 */
export function newIdBlock(time: number): IdBlock {
  const bytes = randomBytes(10);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return { time, start: encodeRandom(BigInt(`0x${bytes.toString('hex')}`)) };
}

/** The id at `position` of a block (0-based). Distinct positions give distinct ids, in ascending order. */
export function idInBlock(block: IdBlock, position: number): string {
  return ulidWithRandom(encodeTime(block.time, 10), decodeRandom(block.start) + BigInt(position));
}

/** Whether `value` is a block as this module writes it (idempotency records are read back from the store). */
export function isIdBlock(value: unknown): value is IdBlock {
  if (value === null || typeof value !== 'object') return false;
  const { time, start } = value as Record<string, unknown>;
  return (
    typeof time === 'number' &&
    Number.isSafeInteger(time) &&
    time >= 0 &&
    typeof start === 'string' &&
    /^[0-9A-F][0-9A-HJKMNP-TV-Z]{15}$/.test(start)
  );
}

/**
 * Whether records may still be written with ids of `block` by a write that may last until `writeEnd`: only
 * while their ids' time is inside the record count's settle window at that moment.
 */
export function blockStillWritable(block: IdBlock, writeEnd: number): boolean {
  return writeEnd - block.time < SETTLE_MS;
}

/** The time an id carries (for tests and logs). */
export function idTime(id: string): number {
  return decodeTime(id);
}

/**
 * A sorted list of ids as runs of consecutive ULIDs (`<first id>*<count>`, comma-separated): a block's ids, or
 * the part of a block a retry writes, take one run or a few, whatever their number. An id that is not a ULID
 * is a run of its own.
 */
export function idRuns(sortedIds: readonly string[]): string {
  const runs: string[] = [];
  let first: string | undefined;
  let last: bigint | undefined;
  let count = 0;
  for (const id of sortedIds) {
    const random = ulidRandom(id);
    if (
      first !== undefined &&
      random !== undefined &&
      last !== undefined &&
      id.slice(0, 10) === first.slice(0, 10) &&
      random === last + 1n
    ) {
      count += 1;
      last = random;
      continue;
    }
    if (first !== undefined) runs.push(`${first}*${count}`);
    first = id;
    last = random;
    count = 1;
  }
  if (first !== undefined) runs.push(`${first}*${count}`);
  return runs.join(',');
}

/** The ids `idRuns` wrote, in order. */
export function idsOfRuns(runs: string): string[] {
  if (runs === '') return [];
  const ids: string[] = [];
  for (const run of runs.split(',')) {
    const star = run.lastIndexOf('*');
    const first = run.slice(0, star);
    const count = Number(run.slice(star + 1));
    const random = ulidRandom(first);
    if (random === undefined || count === 1) {
      ids.push(first);
      continue;
    }
    for (let i = 0n; i < BigInt(count); i++) ids.push(ulidWithRandom(first, random + i));
  }
  return ids;
}

/** How many ids runs written by `idRuns` name, without expanding them. */
export function countOfRuns(runs: string): number {
  if (runs === '') return 0;
  return runs.split(',').reduce((sum, run) => sum + Number(run.slice(run.lastIndexOf('*') + 1)), 0);
}

function ulidRandom(id: string): bigint | undefined {
  if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(id)) return undefined;
  return decodeRandom(id.slice(10));
}
