/**
 * `das indexes`: the indexes of the datasets an application may read, and how far their builds have come
 * (docs/interface.md §17), asked of a running service (`POST /openapi/data/indexes`) with the application's keys,
 * found as `das call` finds them (--config, --app, --key/--secret) at the service `das call` talks to (--url).
 */

import { CommandFailure, type CommandIo, parseCommandArgs, UsageError } from '../../packages/client/src/cli/cli-io';
import { CREDENTIAL_HELP, CREDENTIAL_OPTIONS, resolveCredentials } from '../../packages/client/src/cli/credentials';
import { connectionHint, serviceUrl, URL_HELP } from '../../packages/client/src/cli/service-url';
import { TransportError } from '../../packages/client/src/errors';
import { createClient } from '../../packages/client/src/index';
import type { IndexesResult } from '../../shared/contract/operation-schemas';

const HELP = 'das indexes --help';

export const INDEXES_USAGE = `Usage: das indexes [--dataset <code>] [--url <base>] [key options] [--json]

Lists the indexes of every dataset the application may read (or of --dataset), with their state: complete (lists
use it), building (records stored before the change are being indexed: records done of the dataset's records, and
the percentage), waiting (for an index slot a dropped index frees), dropping (its entries are being removed).

${URL_HELP}
${CREDENTIAL_HELP}
  --dataset <code>    one dataset only
  --json              print the answer's data as JSON
`;

const count = (n: number) => n.toLocaleString('en-US');

/** One line per index: field, state (with progress), and when its job started or it became complete. */
export function formatIndexes(result: IndexesResult): string {
  const lines: string[] = [];
  for (const dataset of result.datasets) {
    lines.push(dataset.datasetCode);
    if (dataset.indexes.length === 0) lines.push('  no indexed field');
    const width = Math.max(0, ...dataset.indexes.map((index) => index.field.length));
    for (const index of dataset.indexes) {
      const progress =
        index.state === 'complete'
          ? 'complete'
          : `${index.state} ${index.percent}%${
              index.recordsTotal === null
                ? ''
                : ` (${count(index.recordsDone ?? 0)} of ${count(index.recordsTotal)} records)`
            }`;
      const when = [
        index.startedAt ? `started ${index.startedAt}` : '',
        index.finishedAt ? `finished ${index.finishedAt}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(`  ${index.field.padEnd(width)}  ${progress}${when ? `  ${when}` : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export async function runIndexes(args: string[], io: CommandIo): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...CREDENTIAL_OPTIONS,
      url: { type: 'string' },
      dataset: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
    true,
  );
  if (values.help) {
    io.out(INDEXES_USAGE);
    return;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected ${positionals.join(' ')}`, HELP);
  const credentials = resolveCredentials(values, io, HELP);
  const baseUrl = serviceUrl(values.url, io);
  const client = createClient({
    baseUrl,
    appCode: credentials.appCode,
    accessKey: credentials.accessKey,
    signingSecret: credentials.secret,
  });
  let response: Awaited<ReturnType<typeof client.send>>;
  try {
    response = await client.send(
      'indexes',
      values.dataset ? { datasetCode: values.dataset } : {},
      values.dataset ? { datasetCode: values.dataset } : {},
    );
  } catch (error) {
    if (error instanceof TransportError && error.httpStatus === undefined) {
      throw new CommandFailure(connectionHint(baseUrl, error));
    }
    throw error;
  }
  const envelope = response.envelope;
  if (!envelope.success) throw new CommandFailure(`${envelope.errorCode}: ${envelope.errorMsg}`);
  const data = envelope.data as IndexesResult;
  io.out(values.json ? `${JSON.stringify(data, null, 2)}\n` : formatIndexes(data));
}
