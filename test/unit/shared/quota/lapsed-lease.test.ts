/**
 * docs/interface.md §7, a running request whose slot lease lapsed before its renewal ran (its environment's event
 * loop held up past the renewal's lead) and was taken back by another environment: the request takes a free slot
 * again and goes on; only when every slot is held does its next store call fail (3001), never running on a slot it
 * does not hold. Environments share one simulated quota item, as in the property test beside this one.
 */
import type { Quota } from '../../../../shared/catalog/catalog';
import { InternalError } from '../../../../shared/contract/errors';
import type { Grant } from '../../../../shared/quota/admission';
import { SimulatedEnvironment, SimulatedItem, SimulatedTimers, settle } from '../../../support/quota-simulation';

const START = Date.parse('2026-11-22T04:10:05Z');
const QUOTA: Quota = { perMinute: 100, perHour: 1_000, perDay: 10_000, concurrent: 2 };

let now = START;
let item: SimulatedItem;
let timers: SimulatedTimers;
const environment = () => new SimulatedEnvironment(item, timers, () => now, 0);

beforeEach(() => {
  now = START;
  item = new SimulatedItem();
  timers = new SimulatedTimers(() => now);
});

/** Delivers every write in flight, answered, until `promise` settles; resolves to its outcome. */
async function landing<T>(promise: Promise<T>): Promise<{ value?: T; error?: Error }> {
  let outcome: { value?: T; error?: Error } | undefined;
  promise.then(
    (value) => {
      outcome = { value };
    },
    (error: Error) => {
      outcome = { error };
    },
  );
  while (!outcome) {
    await settle();
    if (!outcome && item.inFlight.length > 0) item.deliver(0, true);
  }
  return outcome;
}

async function admitted(env: SimulatedEnvironment): Promise<Grant> {
  const { value } = await landing(env.admit(QUOTA));
  if (!value?.decision.admitted) throw new Error(`expected an admission, got ${JSON.stringify(value?.decision)}`);
  env.grant = value.decision.grant;
  return value.decision.grant;
}

/** A runs; its renewal never runs for 2.5 s; B then C are admitted, C taking A's lapsed slot (2 slots in all). */
async function lapseAndTakeBack(): Promise<{
  a: SimulatedEnvironment;
  b: SimulatedEnvironment;
  c: SimulatedEnvironment;
}> {
  const [a, b, c] = [environment(), environment(), environment()];
  await admitted(a);
  now += 2_500;
  await admitted(b);
  await admitted(c);
  expect(Object.keys(item.image?.leases ?? {}).sort()).toEqual([b.holder.id, c.holder.id].sort());
  return { a, b, c };
}

it('takes a free slot again for a running request whose lapsed lease another environment took back', async () => {
  const { a, b, c } = await lapseAndTakeBack();
  // C's request ends and it gives its slot back (as an environment whose own traffic is sparse does).
  await item.release('app-sim', c.holder.id, c.holding().lease as number);
  now += 10;

  const guarded = await landing((a.grant as Grant).guard());
  expect(guarded.error).toBeUndefined();
  expect(a.grant?.covers()).toBe(true);
  expect(item.image?.leases).toEqual({ [a.holder.id]: now + 1_900, [b.holder.id]: START + 2_500 + 1_900 });
});

it('fails the store call (3001) when every slot is held, without writing past the limit', async () => {
  const { a, b, c } = await lapseAndTakeBack();
  now += 10;
  const before = a.writes;
  const guarded = await landing((a.grant as Grant).guard());
  expect(guarded.error?.message).toBe('the request lost its place in the quota: its slot lease could not be renewed');
  expect(guarded.error).toBeInstanceOf(InternalError);
  expect(Object.keys(item.image?.leases ?? {}).sort()).toEqual([b.holder.id, c.holder.id].sort());
  // A saw the slots full in the answer to its failed renewal and stopped there: one write, no retries.
  expect(a.writes - before).toBe(1);
});
