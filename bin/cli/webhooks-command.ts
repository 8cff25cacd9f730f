/**
 * `das webhooks status` and `das webhooks replay --id <subscription> --since <time>` (docs/interface.md §18):
 * against the local service this checkout runs (`npm start`'s store, which it recorded with its address), or with
 * `--stage <stage>` against a deployment (the environment's AWS credentials and region: its events and catalog
 * tables, and for a replay its delivery queue). What they do is shared/changes/webhook-operations.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CommandFailure, type CommandIo, parseCommandArgs, UsageError } from '../../packages/client/src/cli/cli-io';
import { createDocumentClient, endpointClientConfig } from '../../shared/aws/dynamodb';
import { Catalog } from '../../shared/catalog/catalog';
import { readDeployedCatalog } from '../../shared/catalog-store/catalog-store';
import type { DeliveryQueue } from '../../shared/changes/delivery-queue';
import { deliveryQueueNameFor, subscriptionQueueNameFor } from '../../shared/changes/delivery-routes';
import { StoredDeliveryQueue } from '../../shared/changes/local-deliveries';
import { SqsDeliveryQueue } from '../../shared/changes/sqs-deliveries';
import {
  replayWebhook,
  type SubscriptionStatus,
  UnknownSubscriptionError,
  webhookStatuses,
} from '../../shared/changes/webhook-operations';
import { CapacityMeter } from '../../shared/observability/capacity-meter';
import { EventStore } from '../../shared/storage/event-store';
import { LocalDeliveryQueueItems } from '../../shared/storage/local-delivery-queue';
import { CATALOG_TABLE, EVENTS_TABLE, tableNameFor } from '../../shared/storage/table-definitions';
import { WebhookStateStore } from '../../shared/storage/webhook-state';
import { readLocalStore } from '../local/service-address';
import { checkedStage } from './stage-option';

const HELP = 'das webhooks --help';

export const WEBHOOKS_USAGE = `Usage: das webhooks status [--stage <stage>] [--json]
       das webhooks replay --id <subscription> --since <time> [--stage <stage>] [--json]

status   per subscription: its state (active, or disabled by a receiver's 410), deliveries made, attempts
         failed, events waiting for their next attempt, events parked after their last attempt, and the age
         of the oldest event not delivered yet
replay   queue again, for one subscription, every event of the change log since <time> that it receives
         (its parked events of that window included); the receiver sees them with their own webhook-id

  --id <subscription>   the subscription (its id in the configuration's webhooks)
  --since <time>        an ISO 8601 time (2026-11-26T09:00:00Z) or a duration back from now (90s, 15m, 2h, 7d);
                        events older than the change log's retention are no longer kept
  --stage <stage>       a deployment (the environment's AWS credentials and region) instead of the local
                        service npm start runs in this checkout
  --json                print JSON instead of text
`;

interface Target {
  catalog: Catalog;
  events: EventStore;
  state: WebhookStateStore;
  /** The queue a replay puts a subscription's deliveries on. */
  queue(subscriptionId: string): Promise<DeliveryQueue>;
}

export async function runWebhooks(args: string[], io: CommandIo): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      id: { type: 'string' },
      since: { type: 'string' },
      stage: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
    true,
  );
  if (values.help) {
    io.out(WEBHOOKS_USAGE);
    return;
  }
  const [action, ...rest] = positionals;
  if (action !== 'status' && action !== 'replay') {
    throw new UsageError(
      action
        ? `unknown webhooks command '${action}'; there are: status, replay`
        : 'which webhooks command? das webhooks status, or das webhooks replay --id <subscription> --since <time>',
      HELP,
    );
  }
  if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}`, HELP);
  checkedStage(values.stage, HELP);
  const now = Date.now();
  if (action === 'status') {
    const target = await connect(values.stage, now);
    const statuses = await webhookStatuses(target.catalog, target.state, now, new CapacityMeter());
    io.out(values.json ? `${JSON.stringify(statuses, null, 2)}\n` : statusText(statuses));
    return;
  }
  if (!values.id) throw new UsageError('--id is required: which subscription to replay', HELP);
  if (!values.since) throw new UsageError('--since is required: from when to replay', HELP);
  const since = parseSince(values.since, now);
  const target = await connect(values.stage, now);
  let outcome: Awaited<ReturnType<typeof replayWebhook>>;
  try {
    outcome = await replayWebhook(
      target.catalog,
      values.id,
      since,
      now,
      { events: target.events, state: target.state, queue: await target.queue(values.id) },
      new CapacityMeter(),
    );
  } catch (error) {
    if (error instanceof UnknownSubscriptionError) throw new CommandFailure(`das webhooks: ${error.message}`);
    throw error;
  }
  if (values.json) {
    io.out(`${JSON.stringify({ id: values.id, since: new Date(since).toISOString(), ...outcome })}\n`);
    return;
  }
  io.out(
    `${outcome.queued} event${outcome.queued === 1 ? '' : 's'} since ${new Date(since).toISOString()} queued again ` +
      `for ${values.id} (${outcome.unparked} of them parked before).\n`,
  );
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: an ISO 8601 time, or a duration back from `now`. */
export function parseSince(text: string, now: number): number {
  const duration = /^(\d+)([smhd])$/.exec(text);
  if (duration) return now - Number(duration[1]) * (DURATION_UNITS[duration[2] as string] as number);
  const at = /^\d{4}-\d{2}-\d{2}(T|$)/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new UsageError(
      `--since must be an ISO 8601 time (2026-11-26T09:00:00Z) or a duration (90s, 15m, 2h, 7d), not '${text}'`,
      HELP,
    );
  }
  if (at > now) throw new UsageError(`--since ${text} is in the future`, HELP);
  return at;
}

/** The store (and queue) of the local service, or of a deployed stage. */
async function connect(stage: string | undefined, now: number): Promise<Target> {
  let client: DynamoDBClient;
  let tables: { catalog: string; events: string };
  let queue: (subscriptionId: string) => Promise<DeliveryQueue>;
  if (stage !== undefined) {
    client = new DynamoDBClient({ maxAttempts: 3 });
    tables = { catalog: tableNameFor(stage, CATALOG_TABLE), events: tableNameFor(stage, EVENTS_TABLE) };
    queue = async (subscriptionId) => {
      const sqs = new SQSClient({ maxAttempts: 3 });
      const url = await deploymentQueueUrl(sqs, stage, subscriptionId);
      return new SqsDeliveryQueue(sqs, () => url, `replay-${now}`);
    };
  } else {
    const store = readLocalStore();
    if (!store) {
      throw new CommandFailure(
        'das webhooks: no local service runs in this checkout. Start it (npm start), or name a deployment with --stage.',
      );
    }
    client = new DynamoDBClient(endpointClientConfig(store.endpoint, store.region, store.credentialsConfigured));
    tables = store.tables;
    queue = async () => new StoredDeliveryQueue(new LocalDeliveryQueueItems(documents, tables.events));
  }
  const documents = createDocumentClient(client);
  const deployed = await readDeployedCatalog(documents, tables.catalog);
  if (!deployed) throw new CommandFailure(`das webhooks: no configuration is deployed (table ${tables.catalog})`);
  return {
    catalog: new Catalog(deployed.config, deployed.functionVersions, deployed.deployedAt, deployed.indexes),
    events: new EventStore(documents, tables.events),
    state: new WebhookStateStore(documents, tables.events),
    queue,
  };
}

/**
 * The queue a deployment delivers a subscription's events on: its own, the one the stream function puts them on
 * (changes/delivery-routes.ts), or the stage's overflow queue for a subscription deployed without one.
 */
export async function deploymentQueueUrl(sqs: SQSClient, stage: string, subscriptionId: string): Promise<string> {
  try {
    const own = await sqs.send(new GetQueueUrlCommand({ QueueName: subscriptionQueueNameFor(stage, subscriptionId) }));
    if (own.QueueUrl) return own.QueueUrl;
  } catch (error) {
    if (!isMissingQueue(error)) throw error;
  }
  try {
    const overflow = await sqs.send(new GetQueueUrlCommand({ QueueName: deliveryQueueNameFor(stage) }));
    if (overflow.QueueUrl) return overflow.QueueUrl;
  } catch (error) {
    if (!isMissingQueue(error)) throw error;
  }
  throw new CommandFailure(`das webhooks: no delivery queue in stage '${stage}'`);
}

/** SQS's answer for a queue name it does not know (JSON protocol, and the query protocol's older name). */
function isMissingQueue(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue';
}

/** Milliseconds as a person reads an age: 42s, 7m 3s, 5h 12m, 3d 4h. */
function ageText(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

function statusText(statuses: readonly SubscriptionStatus[]): string {
  if (statuses.length === 0) return 'No webhook subscriptions in the deployed configuration.\n';
  const header = ['subscription', 'state', 'deliveries', 'failures', 'retrying', 'parked', 'oldest undelivered'];
  const rows = statuses.map((s) => [
    s.id,
    s.state,
    String(s.deliveries),
    String(s.failures),
    String(s.retrying),
    String(s.parked),
    s.oldestUndeliveredAgeMs === null ? '-' : ageText(s.oldestUndeliveredAgeMs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const failures = statuses
    .filter((s) => s.lastFailure)
    .map((s) => {
      const f = s.lastFailure as NonNullable<SubscriptionStatus['lastFailure']>;
      return `${s.id}: last failure ${new Date(f.at).toISOString()}: ${f.error}`;
    });
  return `${[line(header), ...rows.map(line), ...(failures.length > 0 ? ['', ...failures] : [])].join('\n')}\n`;
}
