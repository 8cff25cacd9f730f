/**
 * Where a deployment puts a subscription's deliveries (shared/changes/delivery-routes.ts): its own queue, named after
 * the stage and the id within SQS's 80 characters, in the overflow queue's account and region; the overflow queue
 * for a subscription without one.
 */
import {
  DeliveryRoutes,
  deliveryQueueNameFor,
  queueNameOfArn,
  subscriptionQueueNameFor,
} from '../../../../shared/changes/delivery-routes';

const OVERFLOW = 'https://sqs.eu-west-1.amazonaws.com/123456789012/data-access-service-live-deliveries.fifo';

it('names a subscription queue after the stage and the id, and the overflow queue after the stage', () => {
  expect(deliveryQueueNameFor('live')).toBe('data-access-service-live-deliveries.fifo');
  expect(subscriptionQueueNameFor('live', 'crm')).toBe('data-access-service-live-deliveries-crm.fifo');
});

it('shortens a name SQS would refuse to the id start and a digest of the whole id, distinct per id', () => {
  const stage = 'a-twenty-char-stage1';
  const first = subscriptionQueueNameFor(stage, `${'order-sync-'.repeat(5)}A`);
  const second = subscriptionQueueNameFor(stage, `${'order-sync-'.repeat(5)}B`);
  expect(first).toHaveLength(80);
  expect(first).toMatch(/^data-access-service-a-twenty-char-stage1-deliveries-order-sync-[0-9a-f]{12}\.fifo$/);
  expect(second).not.toBe(first);
  expect(second).toHaveLength(80);
});

it('routes a subscription with a queue to it, in the overflow queue account and region, and others to the overflow', () => {
  const routes = new DeliveryRoutes(OVERFLOW, 'live', ['crm', 'erp']);
  expect(routes.urlOf('crm')).toBe(
    'https://sqs.eu-west-1.amazonaws.com/123456789012/data-access-service-live-deliveries-crm.fifo',
  );
  expect(routes.urlOf('erp')).toBe(
    'https://sqs.eu-west-1.amazonaws.com/123456789012/data-access-service-live-deliveries-erp.fifo',
  );
  expect(routes.urlOf('added-later')).toBe(OVERFLOW);
});

it('reads a queue name from the ARN Lambda gives each record', () => {
  expect(queueNameOfArn('arn:aws:sqs:eu-west-1:123456789012:data-access-service-live-deliveries-crm.fifo')).toBe(
    'data-access-service-live-deliveries-crm.fifo',
  );
});
