/**
 * `das user-key create --app <code> --user <id>`: make a personal access key for client-key mode (docs/interface.md §14).
 * The key is shown once and stored nowhere; what the configuration keeps is its SHA-256 digest, in the user's
 * `keyHashes`. docs/deploying.md says how a partner issues, rotates and revokes keys in a deployment.
 */
import { type CommandIo, parseCommandArgs, UsageError } from '../../packages/client/src/cli/cli-io';
import { generateUserKey, userKeyDigest } from '../../shared/auth/user-key';
import { loadConfigFile } from '../../shared/catalog-store/load-config';
import { isCode } from '../../shared/contract/codes';

const HELP = 'das user-key --help';

export const USER_KEY_USAGE = `Usage: das user-key create --app <appCode> --user <userId> [--config <file>] [--json]

Makes a personal access key for client-key mode: tools and scripts send it in X-User-AK to the /client/ paths and
act as that user, with the user's grants. The key is 32 random bytes, shown once and stored nowhere; the
configuration keeps only its SHA-256 digest, in the user's keyHashes.

  --app <appCode>     the user's application
  --user <userId>     the user (declared in the application's users)
  --config <file>     check that the application and the user exist in this configuration
  --json              print {appCode, userId, key, keyHash} as JSON instead of the instructions

Revoke a key by removing its digest from keyHashes and deploying; the user's other keys keep working.
`;

export async function runUserKey(args: string[], io: CommandIo): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      app: { type: 'string' },
      user: { type: 'string' },
      config: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
    true,
  );
  if (values.help) {
    io.out(USER_KEY_USAGE);
    return;
  }
  if (positionals.length !== 1 || positionals[0] !== 'create') {
    throw new UsageError(`expected 'das user-key create', not 'das user-key ${positionals.join(' ')}'`, HELP);
  }
  const appCode = values.app;
  const userId = values.user;
  if (!appCode || !userId) throw new UsageError('--app and --user are required', HELP);
  if (!isCode(appCode)) throw new UsageError('--app must be 1 to 64 letters, digits, "_" or "-"', HELP);
  if (!isCode(userId)) throw new UsageError('--user must be 1 to 64 letters, digits, "_" or "-"', HELP);

  let declared = true;
  if (values.config) {
    const app = loadConfigFile(values.config).applications.find((a) => a.appCode === appCode);
    if (!app) throw new UsageError(`no application '${appCode}' in ${values.config}`, HELP);
    declared = (app.users ?? []).some((user) => user.userId === userId);
  }

  const key = generateUserKey();
  const keyHash = userKeyDigest(key);
  if (values.json) {
    io.out(`${JSON.stringify({ appCode, userId, key, keyHash }, null, 2)}\n`);
    return;
  }
  const userEntry = declared
    ? `the keyHashes of user '${userId}'`
    : `a new entry of its users: {"userId": "${userId}", "userName": "...", "loginName": "...", "keyHashes": ["${keyHash}"]}`;
  io.out(
    [
      `Personal access key of user '${userId}' in application '${appCode}'. It is shown this once and stored nowhere:`,
      '',
      `  ${key}`,
      '',
      'Its SHA-256 digest, which is what the configuration holds (never the key):',
      '',
      `  ${keyHash}`,
      '',
      `Add the digest to application '${appCode}' in the configuration file, in ${userEntry}.`,
      'Then deploy the configuration (or restart npm start): the key works from the next catalog refresh,',
      'within 60 seconds of the deploy. Revoke it by removing the digest and deploying again.',
      '',
      'Use it: curl -X POST <base>/client/data/get-list -H "X-User-AK: <key>" -H "Content-Type: application/json" \\',
      `  -d '{"appCode":"${appCode}","datasetCode":"<dataset>"}'    or: das call get-list --user-key <key> --app ${appCode} ...`,
      '',
    ].join('\n'),
  );
}
