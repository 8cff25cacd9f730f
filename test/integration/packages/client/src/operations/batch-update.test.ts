/**
 * The TypeScript client's batch update against the real local server (docs/interface.md §21): `update` with a list
 * of ids changes them all and answers the ids in the order given; a refused batch is the typed error, nothing
 * written.
 */
import { createClient, type DataAccessClient, NotFoundError } from '../../../../../../packages/client/src';
import { MAIN_APP, ServiceHarness } from '../../../../../support/service-harness';

const harness = new ServiceHarness();
let client: DataAccessClient;

beforeAll(async () => {
  await harness.start();
  client = createClient({
    baseUrl: `${harness.url}/`,
    appCode: MAIN_APP.appCode,
    accessKey: MAIN_APP.accessKey,
    signingSecret: MAIN_APP.secret,
  });
});
afterAll(() => harness.stop());

it('updates a list of ids all at once and answers them in the order given', async () => {
  const ids = await client.batchCreate('notes', [{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
  const sent = [ids[2] as string, ids[0] as string, ids[1] as string];
  const answer = await client.update('notes', sent, { body: 'reviewed' });
  expect(answer).toEqual({ ids: sent, total: 3 });
  for (const id of ids) expect((await client.getOne('notes', id)).body).toBe('reviewed');
});

it('answers a batch with an unknown id as NotFoundError naming it, and changes none', async () => {
  const [id] = await client.batchCreate('notes', [{ title: 'kept' }]);
  const missing = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
  const refused = client.update('notes', [id as string, missing], { body: 'never' });
  await expect(refused).rejects.toBeInstanceOf(NotFoundError);
  await expect(refused).rejects.toThrow(`record '${missing}' not found`);
  expect((await client.getOne('notes', id as string)).body).toBeNull();
});
