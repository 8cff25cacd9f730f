/**
 * The demo configuration's hooks (README "Hooks"), as `npm start` serves them: a masking after hook, a
 * validating before hook and a hook that adds related data.
 */
import path from 'node:path';
import { failureWith } from '../../../../support/failure-envelope';
import { REPO_ROOT } from '../../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const DEMO: AppCredentials = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', secret: 'sk-demo-secret' };
const harness = new ServiceHarness(path.join(REPO_ROOT, 'config', 'demo.json'));
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const app = { app: DEMO };

it('check-order refuses an order without a positive amount (1001) and starts a valid one as "new"', async () => {
  const refused = await harness.create('orders', { customer_id: 'c-1', amount: -5 }, app);
  expect(refused.body).toEqual({ ...failureWith(1001), errorMsg: 'amount must be a positive number' });
  const created = await harness.create('orders', { customer_id: 'c-1', amount: 12.5 }, app);
  const id = (created.body as { data: { id: string } }).data.id;
  expect((await harness.getOne('orders', id, app)).body).toMatchObject({ data: { amount: 12.5, status: 'new' } });
});

it('get-one of a customer adds its latest orders and masks its e-mail address', async () => {
  const customer = await harness.create('customers', { name: 'Ida Berg', email: 'ida.berg@example.com' }, app);
  const id = String((customer.body as { data: { id: string } }).data.id);
  const order = await harness.create('orders', { customer_id: id, amount: 30, status: 'paid' }, app);
  const orderId = (order.body as { data: { id: string } }).data.id;
  const got = await harness.getOne('customers', id, app);
  expect(got.body).toMatchObject({
    success: true,
    data: {
      id,
      name: 'Ida Berg',
      email: 'i***@example.com',
      recentOrders: [{ id: orderId, amount: 30, status: 'paid' }],
    },
  });
});
