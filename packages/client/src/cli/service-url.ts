/**
 * Which service `das call` and `das sign --curl` talk to: --url, else DAS_URL, else (in the service's
 * repository) the local service `npm start` is running, wherever its port, else http://127.0.0.1:3000. A
 * refused connection is explained in those terms.
 */
import type { CommandIo } from './cli-io.js';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export const URL_HELP =
  '  --url <base>        the service (env DAS_URL; default: the local service npm start runs,\n' +
  `                      else ${DEFAULT_URL})`;

export function serviceUrl(option: string | undefined, io: CommandIo): string {
  return option ?? (io.env.DAS_URL || undefined) ?? io.workspace?.localServiceUrl() ?? DEFAULT_URL;
}

/** What to check when nothing answered at `baseUrl`, with the network's own reason. */
export function connectionHint(baseUrl: string, error: Error): string {
  // fetch wraps the network's error: TransportError → TypeError('fetch failed') → Error with a code.
  const network = (error.cause as Error | undefined)?.cause as (Error & { code?: unknown }) | undefined;
  const code = typeof network?.code === 'string' ? network.code : network?.message;
  const reason = code ? ` (${code})` : '';
  return `no service at ${baseUrl}${reason} — is \`npm start\` running? set --url or DAS_URL`;
}
