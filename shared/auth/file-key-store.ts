/** Key store adapter for local runs: keys come from the configuration file (`accessKey`, `signingSecret`). */
import { randomBytes } from 'node:crypto';
import type { CatalogConfig } from '../catalog/schema';
import type { ApplicationKeys, KeyStore } from './key-store';

export class FileKeyStore implements KeyStore {
  private readonly keys = new Map<string, ApplicationKeys>();
  private readonly fallbackSecret: string;

  /** `defaultSecret` applies when the file has no `defaultSigningSecret`; a random one otherwise. */
  constructor(config: CatalogConfig, defaultSecret?: string) {
    for (const app of config.applications) {
      if (app.accessKey === undefined) continue;
      const accessKeys = Array.isArray(app.accessKey) ? app.accessKey : [app.accessKey];
      this.keys.set(app.appCode, { accessKeys, signingSecret: app.signingSecret });
    }
    this.fallbackSecret = config.defaultSigningSecret ?? defaultSecret ?? randomBytes(24).toString('base64url');
  }

  async applicationKeys(appCode: string): Promise<ApplicationKeys | undefined> {
    return this.keys.get(appCode);
  }

  async defaultSecret(): Promise<string> {
    return this.fallbackSecret;
  }
}
