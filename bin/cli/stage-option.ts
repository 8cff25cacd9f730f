/**
 * `--stage <name>`: the deployment a command reaches instead of the local service. A stage names its tables,
 * queues and secrets, so it is checked as the stack checks it before anything is looked up by it.
 */
import { UsageError } from '../../packages/client/src/cli/cli-io';
import { isCode } from '../../shared/contract/codes';

/** The stage given, checked; a name that cannot be a stage is a usage error (exit 2) naming the rule. */
export function checkedStage(stage: string | undefined, help: string): string | undefined {
  if (stage !== undefined && !isCode(stage)) {
    throw new UsageError('--stage must be 1 to 64 letters, digits, "_" or "-"', help);
  }
  return stage;
}
