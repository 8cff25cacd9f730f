/**
 * Turns at one record's writes within this process. In a deployment a function's container serves one request at
 * a time, so a write never waits here. `npm start` serves every request in one process, where hundreds of
 * concurrent updates of one record would share the store's time so evenly that none of their change items landed
 * within the 2 s a claim is given (storage/change-items.ts) and all of them failed; taking turns, a few at a time,
 * each lands at once and the queue drains at the store's pace. A waiting update has taken no position and
 * written nothing, so one that waited `MAX_TURN_WAIT_MS` is refused cleanly (update.ts answers 4001 with
 * `Retry-After`) instead of running out of time.
 */

/** Updates of one record this process lets write at once. */
export const RECORD_WRITERS = 8;
/** How long an update waits for its turn before it is refused (4001 with `Retry-After`), well before it would time out. */
export const MAX_TURN_WAIT_MS = 8_000;

/** Refused after waiting its turn too long. */
export class TurnTimeout extends Error {}

const queues = new Map<string, { running: number; waiting: (() => void)[] }>();

/** Run `write` when fewer than `RECORD_WRITERS` writes of `key` run in this process (`TurnTimeout` after a long wait). */
export async function inRecordTurn<T>(key: string, write: () => Promise<T>): Promise<T> {
  let queue = queues.get(key);
  if (!queue) {
    queue = { running: 0, waiting: [] };
    queues.set(key, queue);
  }
  const turn = queue;
  if (turn.running >= RECORD_WRITERS) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        turn.waiting.splice(turn.waiting.indexOf(take), 1);
        reject(new TurnTimeout(`no turn within ${MAX_TURN_WAIT_MS} ms`));
      }, MAX_TURN_WAIT_MS);
      const take = () => {
        clearTimeout(timer);
        resolve();
      };
      turn.waiting.push(take);
    });
  } else turn.running += 1;
  try {
    return await write();
  } finally {
    const next = turn.waiting.shift();
    if (next) next();
    else {
      turn.running -= 1;
      if (turn.running === 0) queues.delete(key);
    }
  }
}
