/**
 * `das token`: mint a pre-generated token for a browser, `{token, timeStamp, expiresAt}` as JSON. Run it where
 * the access key may be (a trusted server); the browser client sends token and timestamp only.
 */
import { mintBrowserToken } from '../browser-token.js';
import { type CommandIo, integerOption, parseCommandArgs } from './cli-io.js';
import { CREDENTIAL_HELP, CREDENTIAL_OPTIONS, resolveCredentials } from './credentials.js';

const HELP = 'das token --help';

export const TOKEN_USAGE = `Usage: das token [--app <appCode>] [--dataset <code>] [--key <accessKey> --secret <secret>] [--timestamp <ms>]

Prints {"token", "timeStamp", "timestamp", "expiresAt"} as JSON: a browser sends token as X-Token and
timeStamp as X-Time-Stamp until expiresAt (10 minutes; milliseconds since the epoch). timestamp is the same
instant as a number, for helpers that read that name. A token is bound to the application
and to the dataset it was minted for (none: execute-sql without a dataset header).

${CREDENTIAL_HELP}
  --dataset <code>    the dataset the browser will call
  --timestamp <ms>    mint for this time instead of now

Example:
  das token --app app-demo --dataset orders --key ak-7f3c9a1b2d4e --secret sk-demo-secret
`;

export function runToken(args: string[], io: CommandIo): void {
  const { values } = parseCommandArgs(
    args,
    {
      ...CREDENTIAL_OPTIONS,
      dataset: { type: 'string' },
      timestamp: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
  );
  if (values.help) {
    io.out(TOKEN_USAGE);
    return;
  }
  const timeStamp = integerOption(values.timestamp, 'timestamp', HELP);
  const { appCode, accessKey, secret } = resolveCredentials(values, io, HELP);
  const minted = mintBrowserToken({ appCode, accessKey, datasetCode: values.dataset }, secret, timeStamp ?? Date.now());
  io.out(`${JSON.stringify(minted, null, 2)}\n`);
}
