/** Reads beside the quota admission (`shared/quota/beside-admission.ts`): what runs when, and who answers. */
import { RateLimitedError } from '../../../../shared/contract/errors';
import { besideAdmission } from '../../../../shared/quota/beside-admission';

/** A port that records the calls it starts. */
function recordingPort(started: string[], fail = false) {
  return {
    budget: 7,
    async read(name: string): Promise<string> {
      started.push(name);
      if (fail) throw new Error(`store failed on ${name}`);
      return `value of ${name}`;
    },
  };
}

function pending(): { promise: Promise<void>; admit: () => void; refuse: (error: Error) => void } {
  let admit: () => void = () => undefined;
  let refuse: (error: Error) => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    admit = resolve;
    refuse = reject;
  });
  promise.catch(() => undefined);
  return { promise, admit, refuse };
}

describe('besideAdmission', () => {
  it('starts the first call at once, holds its answer and every later call until the request is admitted', async () => {
    const started: string[] = [];
    const admission = pending();
    const ports = besideAdmission({ a: recordingPort(started), b: recordingPort(started) }, admission.promise);
    let firstAnswered = false;
    const first = ports.a.read('first').then((value) => {
      firstAnswered = true;
      return value;
    });
    const second = ports.b.read('second');
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['first']);
    expect(firstAnswered).toBe(false);

    admission.admit();
    expect(await first).toBe('value of first');
    expect(await second).toBe('value of second');
    expect(started).toEqual(['first', 'second']);
    expect(ports.a.budget).toBe(7);
  });

  it('answers with the refusal, not with what was read, when the request is refused', async () => {
    const started: string[] = [];
    const admission = pending();
    const ports = besideAdmission({ a: recordingPort(started) }, admission.promise);
    const first = ports.a.read('first');
    const later = ports.a.read('later');
    const refusal = new RateLimitedError('limit of 1 request in flight reached; retry after 9 s', 9);
    admission.refuse(refusal);
    await expect(first).rejects.toBe(refusal);
    await expect(later).rejects.toBe(refusal);
    expect(started).toEqual(['first']);
  });

  it('answers with the refusal even when the read itself failed', async () => {
    const admission = pending();
    const ports = besideAdmission({ a: recordingPort([], true) }, admission.promise);
    const first = ports.a.read('first');
    const refusal = new RateLimitedError('per-minute limit of 3 requests reached; retry after 23 s', 23);
    admission.refuse(refusal);
    await expect(first).rejects.toBe(refusal);
  });

  it("passes the read's failure on once the request is admitted", async () => {
    const admission = pending();
    const ports = besideAdmission({ a: recordingPort([], true) }, admission.promise);
    const first = ports.a.read('first');
    admission.admit();
    await expect(first).rejects.toThrow('store failed on first');
  });
});
