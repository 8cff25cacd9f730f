/**
 * docs/interface.md §18 (revisions) over HTTP: get-one, create and update answer the record's revision as ETag;
 * an update that changes nothing writes nothing; If-Match makes the revision a precondition (412); records written
 * before revisions existed are at revision 1; concurrent updates each get a revision of their own.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { expectFailure } from '../../../support/failure-envelope';
import { ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

function lastLine(operation: string): Record<string, unknown> {
  const line = [...harness.logLines].reverse().find((l) => l.operation === operation);
  if (!line) throw new Error(`no log line of ${operation}`);
  return line;
}

describe('revisions as ETag', () => {
  it('answers revision 1 on create and get-one, and one more on each update that changes the record', async () => {
    const created = await harness.create('notes', { title: 'first' });
    expect(created.headers.get('etag')).toBe('"1"');
    const id = created.body.data.id;
    expect((await harness.getOne('notes', id)).headers.get('etag')).toBe('"1"');

    const second = await harness.update('notes', { id, title: 'second' });
    expect(second.status).toBe(200);
    expect(second.headers.get('etag')).toBe('"2"');
    const third = await harness.update('notes', { id, body: 'more' });
    expect(third.headers.get('etag')).toBe('"3"');
    const read = await harness.getOne('notes', id);
    expect(read.headers.get('etag')).toBe('"3"');
    expect(read.body.data).toMatchObject({ id, title: 'second', body: 'more' });
    // The revision is a header only: records gain no field.
    expect(Object.keys(read.body.data)).not.toContain('revision');
  });

  it('lets a browser read the ETag header', async () => {
    const created = await harness.create('notes', { title: 'cors' });
    expect(created.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  it('answers a batch create without an ETag (it holds many records), each record at revision 1', async () => {
    const batch = await harness.batchCreate('notes', [{ title: 'a' }, { title: 'b' }]);
    expect(batch.status).toBe(200);
    expect(batch.headers.get('etag')).toBeNull();
    const [first, second] = batch.body.data as string[];
    expect((await harness.getOne('notes', first)).headers.get('etag')).toBe('"1"');
    expect((await harness.getOne('notes', second)).headers.get('etag')).toBe('"1"');
  });

  it('answers no ETag with a failure', async () => {
    const missing = await harness.getOne('notes', '01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expectFailure(missing, 2002);
    expect(missing.headers.get('etag')).toBeNull();
  });
});

describe('an update that changes nothing', () => {
  it('writes nothing and answers the record as it is, at the same revision', async () => {
    const created = await harness.create('typed', { s: 'same', i: 4, j: { a: [1, 2] } });
    const id = created.body.data.id;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const res = await harness.update('typed', { id, s: 'same', i: '4', j: { a: [1, 2] }, t: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(res.body.data).toEqual(created.body.data);
    // Written without a read first, refused because it changes nothing: the change item claimed and withdrawn, the
    // refused write and one consistent read to answer the record as it is, besides the quota's admission (one write,
    // or none when the environment held a token and a live slot).
    expect(lastLine('update')).toMatchObject({ readUnits: 1 });
    expect([3, 4]).toContain(lastLine('update')?.writeUnits);
    expect((await harness.getOne('typed', id)).body.data.gmt_modified).toBe(created.body.data.gmt_modified);
  });

  it('costs no read when it changes something: its change item, the conditional write, its revision', async () => {
    const created = await harness.create('notes', { title: 'metered' });
    await harness.update('notes', { id: created.body.data.id, title: 'metered again' });
    // The change item (claimed first, one unit), the record's write, and the revision the write gave written into
    // the change item, besides the quota's admission (one write, or none when the environment held a token and a
    // live slot).
    expect(lastLine('update')).toMatchObject({ readUnits: 0 });
    expect([3, 4]).toContain(lastLine('update')?.writeUnits);
  });
});

describe('If-Match', () => {
  it('applies an update sent with the revision the record is at', async () => {
    const created = await harness.create('notes', { title: 'v1' });
    const id = created.body.data.id;
    const res = await harness.update('notes', { id, title: 'v2' }, { headers: { 'If-Match': '"1"' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe('"2"');
    expect(res.body.data.title).toBe('v2');
  });

  it('refuses an update sent with an older revision with 1001 and HTTP 412, and writes nothing', async () => {
    const created = await harness.create('notes', { title: 'v1' });
    const id = created.body.data.id;
    await harness.update('notes', { id, title: 'v2' });
    const stale = await harness.update('notes', { id, title: 'lost update' }, { headers: { 'If-Match': '"1"' } });
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual({
      success: false,
      msg: null,
      data: null,
      errorCode: 1001,
      errorMsg: `record '${id}' was changed since revision 1: it is at revision 2; read it again and send If-Match: "2"`,
    });
    const read = await harness.getOne('notes', id);
    expect(read.body.data.title).toBe('v2');
    expect(read.headers.get('etag')).toBe('"2"');
  });

  it('lets exactly one of five concurrent updates sent with the same revision through', async () => {
    const created = await harness.create('notes', { title: 'contended' });
    const id = created.body.data.id;
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((k) => harness.update('notes', { id, [`f${k}`]: k }, { headers: { 'If-Match': '"1"' } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412]);
    const read = await harness.getOne('notes', id);
    expect(read.headers.get('etag')).toBe('"2"');
    const written = [1, 2, 3, 4, 5].filter((k) => read.body.data[`f${k}`] === k);
    expect(written).toHaveLength(1);
  });

  it('accepts * and a list of revisions', async () => {
    const created = await harness.create('notes', { title: 'v1' });
    const id = created.body.data.id;
    const any = await harness.update('notes', { id, title: 'v2' }, { headers: { 'If-Match': '*' } });
    expect(any.headers.get('etag')).toBe('"2"');
    const listed = await harness.update('notes', { id, title: 'v3' }, { headers: { 'If-Match': '"1", "2"' } });
    expect(listed.headers.get('etag')).toBe('"3"');
  });

  it.each([['abc'], ['"0"'], ['"-1"'], ['""']])('refuses If-Match %s with 1001 and HTTP 400', async (value) => {
    const created = await harness.create('notes', { title: 'v1' });
    const res = await harness.update(
      'notes',
      { id: created.body.data.id, title: 'v2' },
      { headers: { 'If-Match': value } },
    );
    expectFailure(
      res,
      1001,
      `If-Match must be a record revision in quotes, as the ETag header gives it (e.g. If-Match: "3"), not '${value}'`,
    );
  });

  it('answers 2002 for an unknown id before looking at If-Match', async () => {
    const res = await harness.update(
      'notes',
      { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', title: 'ghost' },
      { headers: { 'If-Match': '"1"' } },
    );
    expectFailure(res, 2002);
  });
});

describe('records written before revisions existed', () => {
  it('are at revision 1, and their first update takes them to 2', async () => {
    const { client, tables } = harness.dynamo();
    const id = '01HZZZZZZZZZZZZZZZZZZZZZZZ';
    await client.send(
      new PutCommand({
        TableName: tables.records,
        Item: {
          '@pk': 'ds#notes',
          '@sk': id,
          title: 'written long ago',
          gmt_create: '2024-01-01 00:00:00',
          gmt_modified: '2024-01-01 00:00:00',
        },
      }),
    );
    const read = await harness.getOne('notes', id);
    expect(read.headers.get('etag')).toBe('"1"');
    const updated = await harness.update('notes', { id, title: 'touched' }, { headers: { 'If-Match': '"1"' } });
    expect(updated.status).toBe(200);
    expect(updated.headers.get('etag')).toBe('"2"');
    expect(updated.body.data).toMatchObject({ id, title: 'touched', gmt_create: '2024-01-01 00:00:00' });
  });
});

describe('concurrent updates', () => {
  it('give each of 10 updates of different fields a revision of its own, and keep every field', async () => {
    const created = await harness.create('notes', { title: 'busy' });
    const id = created.body.data.id;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, k) => harness.update('notes', { id, [`f${k + 1}`]: k + 1 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const revisions = results.map((r) => Number(JSON.parse(r.headers.get('etag') ?? '0'))).sort((a, b) => a - b);
    expect(revisions).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const read = await harness.getOne('notes', id);
    expect(read.headers.get('etag')).toBe('"11"');
    expect(read.body.data).toMatchObject({ f1: 1, f2: 2, f3: 3, f4: 4, f5: 5, f6: 6, f7: 7, f8: 8, f9: 9, f10: 10 });
  });
});

describe('with an Idempotency-Key', () => {
  it('answers a replay with the ETag of the first answer', async () => {
    const created = await harness.create('notes', { title: 'v1' });
    const id = created.body.data.id;
    const headers = { 'Idempotency-Key': `rev-${id}` };
    const first = await harness.update('notes', { id, title: 'v2' }, { headers });
    await harness.update('notes', { id, title: 'v3' });
    const replay = await harness.update('notes', { id, title: 'v2' }, { headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('etag')).toBe('"2"');
    expect(replay.body).toEqual(first.body);
  });
});
