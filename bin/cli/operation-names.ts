/** Operation names on the command line: the route names (`get-list`) or their camelCase (`getList`). */
import { type OperationName, ROUTES } from '../../shared/contract/routes';
import { UsageError } from './cli-io';

export function operationName(text: string, helpCommand: string): OperationName {
  const kebab = text.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
  const route = ROUTES.find((r) => r.operation === kebab);
  if (!route) {
    throw new UsageError(
      `unknown operation '${text}'; use one of: ${ROUTES.map((r) => r.operation).join(', ')}`,
      helpCommand,
    );
  }
  return route.operation;
}
