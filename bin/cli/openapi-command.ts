/** `das openapi`: print the OpenAPI document, or (--write) refresh the generated documents under docs/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type CommandIo, parseCommandArgs } from '../../packages/client/src/cli/cli-io';
import { buildOpenApiDocument } from '../../shared/contract/openapi-document';
import { GENERATED_DOCUMENTS, PACKAGE_VERSION, REPOSITORY_ROOT } from './generated-docs';

export const OPENAPI_USAGE = `Usage: das openapi [--server <url>]
       das openapi --write

Prints the OpenAPI 3.1 document of the API, generated from the operation schemas the service validates with.
  --server <url>  name this server in the document (default: a baseUrl variable, http://127.0.0.1:3000)
  --write         write ${GENERATED_DOCUMENTS.map((d) => d.file).join(' and ')} (npm run openapi)
`;

export function runOpenApi(args: string[], io: CommandIo): void {
  const { values } = parseCommandArgs(
    args,
    { server: { type: 'string' }, write: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    'das openapi --help',
  );
  if (values.help) {
    io.out(OPENAPI_USAGE);
    return;
  }
  if (!values.write) {
    const document = buildOpenApiDocument({
      version: PACKAGE_VERSION,
      ...(values.server ? { serverUrl: values.server } : {}),
    });
    io.out(`${JSON.stringify(document, null, 2)}\n`);
    return;
  }
  for (const document of GENERATED_DOCUMENTS) {
    const file = path.join(REPOSITORY_ROOT, document.file);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, document.render());
    io.out(`wrote ${document.file}\n`);
  }
}
