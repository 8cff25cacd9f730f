/**
 * The key store port: the active access keys and signing secret of an application, and the deployment's
 * default secret. Adapters: Secrets Manager (deployments) and the configuration file (local runs).
 */

export interface ApplicationKeys {
  /** One, or two while a key is being rotated. */
  accessKeys: readonly string[];
  /** The application's own signing secret; the deployment's default secret signs when absent. */
  signingSecret?: string | undefined;
}

export interface KeyStore {
  /** `undefined` when the store has no keys for the application. */
  applicationKeys(appCode: string): Promise<ApplicationKeys | undefined>;
  defaultSecret(): Promise<string>;
}

/** The secret payload of an application: `{"accessKey": "..."}` or `{"accessKeys": [...]}`, optional `signingSecret`. */
export function parseApplicationSecret(text: string): ApplicationKeys {
  const value = JSON.parse(text) as { accessKey?: unknown; accessKeys?: unknown; signingSecret?: unknown };
  const keys = Array.isArray(value.accessKeys) ? value.accessKeys : [value.accessKey];
  const accessKeys = keys.filter((k): k is string => typeof k === 'string' && k.length > 0);
  if (accessKeys.length === 0) throw new Error('application secret has no accessKey');
  const signingSecret =
    typeof value.signingSecret === 'string' && value.signingSecret ? value.signingSecret : undefined;
  return { accessKeys, signingSecret };
}
