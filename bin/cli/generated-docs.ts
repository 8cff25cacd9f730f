/**
 * The checked-in documents generated from schemas: the OpenAPI document and the configuration's JSON Schema.
 * `npm run openapi` writes them and a test fails when the checked-in copies differ from what this renders.
 */
import path from 'node:path';
import { buildConfigJsonSchema } from '../../shared/catalog/config-json-schema';
import { buildOpenApiDocument } from '../../shared/contract/openapi-document';

export const REPOSITORY_ROOT = path.join(__dirname, '..', '..');

/** The document's info.version follows the package's. */
export const PACKAGE_VERSION: string = (require('../../package.json') as { version: string }).version;

export interface GeneratedDocument {
  /** Relative to the repository root. */
  file: string;
  render(): string;
}

function serialise(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export const GENERATED_DOCUMENTS: readonly GeneratedDocument[] = [
  { file: 'docs/openapi.json', render: () => serialise(buildOpenApiDocument({ version: PACKAGE_VERSION })) },
  { file: 'docs/config.schema.json', render: () => serialise(buildConfigJsonSchema()) },
];
