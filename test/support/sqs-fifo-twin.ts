/**
 * SQS FIFO queues and Lambda's event source mappings over them, in memory, for tests of the deployment's delivery
 * path with SQS mocked at the SDK client (AWS's services have no local twin here). What it keeps of AWS's behaviour:
 *
 * - a queue hands out a message group's messages in the order they were sent, and none of a group while one of its
 *   messages is in flight or waiting to become visible again (FIFO);
 * - a deduplication id seen before on the same queue adds nothing;
 * - a mapping runs at most `maxConcurrency` batches of up to `batchSize` messages at once (ScalingConfig's
 *   MaximumConcurrency); a batch's messages not reported as failures are deleted; a failed one becomes visible again
 *   when its visibility, as the handler changed it, ends, or after the queue's visibility timeout otherwise.
 */
import {
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityCommandInput,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';

interface TwinMessage {
  messageId: string;
  body: string;
  group: string;
  receiveCount: number;
  visibleAt: number;
  receipt?: string;
  /** Visibility a handler set while the message was in flight (ms from now, applied when the batch ends). */
  changedVisibleAt?: number;
}

class FifoQueueTwin {
  readonly messages: TwinMessage[] = [];
  private readonly dedup = new Set<string>();
  /** Every body ever sent, in order (parked queues are read from this). */
  readonly sent: string[] = [];

  constructor(
    readonly url: string,
    private readonly visibilityTimeoutMs: number,
  ) {}

  send(body: string, group: string, dedupId: string, messageId: string): void {
    if (this.dedup.has(dedupId)) return;
    this.dedup.add(dedupId);
    this.sent.push(body);
    this.messages.push({ messageId, body, group, receiveCount: 0, visibleAt: 0 });
  }

  /** Up to `max` messages, FIFO: a group whose first message is not available gives none. */
  receive(max: number, now: number, nextReceipt: () => string): TwinMessage[] {
    const blocked = new Set<string>();
    const batch: TwinMessage[] = [];
    for (const message of this.messages) {
      if (batch.length >= max) break;
      if (blocked.has(message.group)) continue;
      if (message.receipt !== undefined || message.visibleAt > now) {
        blocked.add(message.group);
        continue;
      }
      message.receipt = nextReceipt();
      message.receiveCount += 1;
      batch.push(message);
    }
    return batch;
  }

  changeVisibility(receipt: string, seconds: number, now: number): void {
    const message = this.messages.find((m) => m.receipt === receipt);
    if (!message) throw Object.assign(new Error('ReceiptHandleIsInvalid'), { name: 'ReceiptHandleIsInvalid' });
    message.changedVisibleAt = now + seconds * 1000;
  }

  /** A batch is over: the messages it did not fail are deleted, the failed ones wait for their visibility. */
  finish(batch: readonly TwinMessage[], failed: ReadonlySet<string>, now: number): void {
    for (const message of batch) {
      if (!failed.has(message.messageId)) {
        this.messages.splice(this.messages.indexOf(message), 1);
        continue;
      }
      message.visibleAt = message.changedVisibleAt ?? now + this.visibilityTimeoutMs;
      delete message.changedVisibleAt;
      delete message.receipt;
    }
  }
}

export interface MappingOptions {
  queueUrl: string;
  maxConcurrency: number;
  batchSize: number;
  handler(event: SQSEvent): Promise<SQSBatchResponse>;
}

/** The account's SQS, mocked at the SDK client, with its FIFO queues and the mappings that read them. */
export class SqsFifoTwin {
  readonly client = mockClient(SQSClient);
  private readonly queues = new Map<string, FifoQueueTwin>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private sequence = 0;

  constructor(
    urls: readonly string[],
    private readonly options: { visibilityTimeoutMs: number; now?: () => number },
  ) {
    for (const url of urls) this.queues.set(url, new FifoQueueTwin(url, options.visibilityTimeoutMs));
    this.client.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => {
      const queue = this.queue(input.QueueUrl as string);
      for (const entry of input.Entries ?? []) {
        queue.send(
          entry.MessageBody as string,
          entry.MessageGroupId as string,
          entry.MessageDeduplicationId as string,
          `m-${++this.sequence}`,
        );
      }
      return { Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: `m-${this.sequence}` })) };
    });
    this.client.on(SendMessageCommand).callsFake((input: SendMessageCommandInput) => {
      this.queue(input.QueueUrl as string).send(
        input.MessageBody as string,
        input.MessageGroupId as string,
        input.MessageDeduplicationId as string,
        `m-${++this.sequence}`,
      );
      return { MessageId: `m-${this.sequence}` };
    });
    this.client.on(ChangeMessageVisibilityCommand).callsFake((input: ChangeMessageVisibilityCommandInput) => {
      this.queue(input.QueueUrl as string).changeVisibility(
        input.ReceiptHandle as string,
        input.VisibilityTimeout as number,
        this.now(),
      );
      return {};
    });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** A queue by URL; SQS answers QueueDoesNotExist for one it does not have. */
  queue(url: string): FifoQueueTwin {
    const queue = this.queues.get(url);
    if (!queue) throw Object.assign(new Error(`no queue ${url}`), { name: 'QueueDoesNotExist' });
    return queue;
  }

  /** The ARN Lambda gives a record of the queue at `url` (`https://sqs.<region>.amazonaws.com/<account>/<name>`). */
  static arnOf(url: string): string {
    const { hostname, pathname } = new URL(url);
    const [, account, name] = pathname.split('/');
    return `arn:aws:sqs:${hostname.split('.')[1]}:${account}:${name}`;
  }

  /** Start an event source mapping: it polls its queue until `stop`. */
  startMapping(options: MappingOptions): void {
    const queue = this.queue(options.queueUrl);
    let inFlight = 0;
    const poll = () => {
      if (this.stopped) return;
      while (inFlight < options.maxConcurrency) {
        const batch = queue.receive(options.batchSize, this.now(), () => `rh-${++this.sequence}`);
        if (batch.length === 0) break;
        inFlight += 1;
        const run = this.invoke(queue, batch, options).finally(() => {
          inFlight -= 1;
          this.running.delete(run);
        });
        this.running.add(run);
      }
      setTimeout(poll, 5);
    };
    poll();
  }

  private async invoke(queue: FifoQueueTwin, batch: TwinMessage[], options: MappingOptions): Promise<void> {
    const records = batch.map(
      (message) =>
        ({
          messageId: message.messageId,
          receiptHandle: message.receipt,
          body: message.body,
          attributes: { MessageGroupId: message.group, ApproximateReceiveCount: String(message.receiveCount) },
          eventSourceARN: SqsFifoTwin.arnOf(queue.url),
        }) as unknown as SQSRecord,
    );
    let failed: Set<string>;
    try {
      const answer = await options.handler({ Records: records });
      failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier));
    } catch {
      failed = new Set(batch.map((m) => m.messageId));
    }
    queue.finish(batch, failed, this.now());
  }

  /** Stop every mapping and wait for the batches they are running. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
    this.client.restore();
  }
}
