/** Lambda handler of the webhook delivery queue: signs and sends change events (docs/interface.md §18). */
import { handleDeliveryBatch } from '../shared/composition/change-log-ports';

export const handler = handleDeliveryBatch;
