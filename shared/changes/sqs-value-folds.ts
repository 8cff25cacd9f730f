/**
 * The fold queue of a deployment (value-folds.ts): a standard SQS queue whose messages wait their delivery delay
 * (SQS allows at most 15 minutes) until the claims they name have settled, and the fold function that takes them.
 * A batch folds each dataset once, however many messages name it; a fold that leaves settled claims puts a message
 * for itself again; a fold that fails is reported, so SQS hands its message out again after the visibility timeout,
 * and after the queue's receive limit moves it to the dead-letter queue (watched by an alarm). Nothing counts
 * wrong meanwhile: the claims stay counted from the change items.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  decodeFoldRequest,
  encodeFoldRequest,
  type FoldPorts,
  type FoldQueue,
  type FoldRequest,
  foldAndLog,
} from './value-folds';

/** SQS's longest delivery delay (s). */
const MAX_DELAY_SECONDS = 900;
/** SendMessageBatch's most messages per call. */
const SEND_BATCH = 10;
/** A fold that left settled claims runs again this much later (s). */
const LEFT_AGAIN_SECONDS = 1;

export class SqsFoldQueue implements FoldQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly now: () => number = Date.now,
  ) {}

  async schedule(requests: readonly FoldRequest[]): Promise<void> {
    for (let start = 0; start < requests.length; start += SEND_BATCH) {
      const batch = requests.slice(start, start + SEND_BATCH);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((request, index) => ({
            Id: String(index),
            MessageBody: encodeFoldRequest(request),
            DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((request.dueAt - this.now()) / 1000))),
          })),
        }),
      );
      if (result.Failed && result.Failed.length > 0) {
        const first = result.Failed[0];
        throw new Error(`SQS refused ${result.Failed.length} folds (${first?.Code}: ${first?.Message})`);
      }
    }
  }
}

export interface SqsFoldBatchOptions {
  ports: FoldPorts;
  queue: FoldQueue;
  metricNamespace: string;
}

/** The fold function's batch: each dataset named folded once; the messages of a failed fold come again. */
export async function foldSqsBatch(event: SQSEvent, options: SqsFoldBatchOptions): Promise<SQSBatchResponse> {
  const messagesOf = new Map<string, string[]>();
  for (const record of event.Records) {
    const request = decodeFoldRequest(record.body);
    // A body that is no fold request is dropped: handing it out again would not make it one.
    if (!request) continue;
    messagesOf.set(request.datasetCode, [...(messagesOf.get(request.datasetCode) ?? []), record.messageId]);
  }
  const failures: string[] = [];
  for (const [datasetCode, messageIds] of messagesOf) {
    const run = await foldAndLog(datasetCode, options.ports, options.metricNamespace);
    if (!run) failures.push(...messageIds);
    else if (run.left) {
      await options.queue.schedule([{ datasetCode, dueAt: options.ports.now() + LEFT_AGAIN_SECONDS * 1000 }]);
    } else if (run.againAt !== undefined) {
      // Change items due for deletion later (at most 15 minutes' delay: a fold that comes early asks again).
      await options.queue.schedule([{ datasetCode, dueAt: run.againAt }]);
    }
  }
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
}
