/**
 * Where `das sign`, `das token` and `das call` get an application's keys: --key/--secret (or the DAS_ACCESS_KEY
 * and DAS_SIGNING_SECRET environment variables, which keep the secret out of the process list), else the local
 * keys of the application in a configuration file (--config; in a checkout of the service, the demo
 * configuration by default), as `npm start` uses.
 */
import { readFileSync } from 'node:fs';
import { type CommandIo, type LocalKeysConfig, UsageError } from './cli-io.js';

export interface CredentialOptions {
  app?: string | undefined;
  key?: string | undefined;
  secret?: string | undefined;
  config?: string | undefined;
}

export interface Credentials {
  appCode: string;
  accessKey: string;
  secret: string;
  /** The configuration the keys came from, when they came from one. */
  config?: LocalKeysConfig;
}

export const CREDENTIAL_HELP = [
  '  --app <appCode>     the application (env DAS_APP_CODE; default: the first one with local keys in --config)',
  '  --key <accessKey>   its access key (env DAS_ACCESS_KEY)',
  '  --secret <secret>   its signing secret (env DAS_SIGNING_SECRET)',
  '  --config <file>     without --key/--secret, take the local keys from this configuration',
  "                      (default in the service's repository: config/demo.json)",
].join('\n');

export const CREDENTIAL_OPTIONS = {
  app: { type: 'string' },
  key: { type: 'string' },
  secret: { type: 'string' },
  config: { type: 'string' },
} as const;

/** A configuration file read for its keys only; `das config validate` (in the service's repository) checks it. */
function readKeysFile(file: string): LocalKeysConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`, 'das --help');
  }
  const applications = (parsed as { applications?: unknown }).applications;
  if (!Array.isArray(applications)) throw new UsageError(`${file} has no applications list`, 'das --help');
  return parsed as LocalKeysConfig;
}

/** The three options that name an application's keys, with the variables that stand in for them. */
const KEY_OPTIONS = [
  ['--app', 'DAS_APP_CODE'],
  ['--key', 'DAS_ACCESS_KEY'],
  ['--secret', 'DAS_SIGNING_SECRET'],
] as const;

/**
 * The keys to sign with. Without any, and without a configuration to take local keys from, the usage error says
 * every way to give them; `otherWay` adds one a command has besides (das call: a personal access key).
 */
export function resolveCredentials(
  options: CredentialOptions,
  io: CommandIo,
  helpCommand: string,
  otherWay?: string,
): Credentials {
  // An empty variable counts as unset, as shells and CI systems often export them empty.
  const appCode = options.app ?? (io.env.DAS_APP_CODE || undefined);
  const accessKey = options.key ?? (io.env.DAS_ACCESS_KEY || undefined);
  const secret = options.secret ?? (io.env.DAS_SIGNING_SECRET || undefined);
  if (accessKey !== undefined || secret !== undefined || (!options.config && !io.workspace)) {
    const given = [appCode, accessKey, secret];
    if (given.every((value) => value === undefined)) {
      throw new UsageError(
        'no keys to sign with: give --app, --key and --secret (or DAS_APP_CODE, DAS_ACCESS_KEY and ' +
          `DAS_SIGNING_SECRET), or --config <file> holding the application's local keys${otherWay ? `, ${otherWay}` : ''}`,
        helpCommand,
      );
    }
    const missing = KEY_OPTIONS.filter((_, i) => given[i] === undefined);
    if (missing.length > 0) {
      throw new UsageError(
        `${missing.map(([option]) => option).join(' and ')} missing (or ${missing.map(([, variable]) => variable).join(', ')}): ` +
          '--app, --key and --secret go together',
        helpCommand,
      );
    }
    return { appCode: appCode as string, accessKey: accessKey as string, secret: secret as string };
  }
  const file = options.config ?? (io.workspace?.defaultConfig as string);
  const config = io.workspace ? io.workspace.loadConfig(file) : readKeysFile(file);
  const app = appCode
    ? config.applications.find((a) => a.appCode === appCode)
    : config.applications.find((a) => a.accessKey !== undefined);
  if (!app) {
    throw new UsageError(
      appCode
        ? `no application '${appCode}' in ${file}`
        : `no application with local keys in ${file}; pass --key and --secret`,
      helpCommand,
    );
  }
  const localKey = Array.isArray(app.accessKey) ? app.accessKey[0] : app.accessKey;
  const localSecret = app.signingSecret ?? config.defaultSigningSecret;
  if (!localKey || !localSecret) {
    throw new UsageError(
      `application '${app.appCode}' has no local accessKey and signing secret in ${file}; pass --key and --secret`,
      helpCommand,
    );
  }
  return { appCode: app.appCode, accessKey: localKey, secret: localSecret, config };
}
