/** Operation names on the command line: the route names (`get-list`) or their camelCase (`getList`). */
import { OPERATIONS, type OperationName } from '../operations.js';
import { UsageError } from './cli-io.js';

export function operationName(text: string, helpCommand: string): OperationName {
  const kebab = text.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
  const route = OPERATIONS.find((r) => r.operation === kebab);
  if (!route) {
    throw new UsageError(
      `unknown operation '${text}'; use one of: ${OPERATIONS.map((r) => r.operation).join(', ')}`,
      helpCommand,
    );
  }
  return route.operation;
}
