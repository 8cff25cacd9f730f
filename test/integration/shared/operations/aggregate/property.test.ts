/**
 * The aggregate property (test/support/aggregate-property.ts) on the embedded engine, over HTTP against dynalite.
 */
import path from 'node:path';
import { aggregateProperties, aggregateTextCases, ORDERS } from '../../../../support/aggregate-property';
import { FIXTURES_DIR } from '../../../../support/paths';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'sdk-calls-config.json'));

beforeAll(async () => {
  await harness.start();
  const res = await harness.batchCreate('orders', ORDERS);
  expect(res.body.success).toBe(true);
}, 60_000);
afterAll(() => harness.stop());

aggregateProperties(() => harness, 80);
aggregateTextCases(() => harness);
