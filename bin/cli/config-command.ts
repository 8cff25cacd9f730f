/** `das config validate <file>`: check a configuration file the way the service loads it; every problem, by path. */
import { CommandFailure, type CommandIo, parseCommandArgs, UsageError } from '../../packages/client/src/cli/cli-io';
import { ConfigError, loadConfigFile } from '../../shared/catalog-store/load-config';

const HELP = 'das config --help';

export const CONFIG_USAGE = `Usage: das config validate <file> [--json]

Checks a configuration file (docs/interface.md §9) as the service does when it loads it: the structure, and the
references between applications, datasets, grants and queries. Every problem is listed with its path, e.g.
  datasets[0].fields[1].options: an enum field needs options
Exit code 0 when valid, 1 when not.

  --json   print {"file", "valid", "problems": [{"path", "message"}]} instead of text
`;

export function runConfig(args: string[], io: CommandIo): void {
  const { values, positionals } = parseCommandArgs(
    args,
    { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    HELP,
    true,
  );
  if (values.help) {
    io.out(CONFIG_USAGE);
    return;
  }
  const [action, file, ...rest] = positionals;
  if (action !== 'validate') {
    throw new UsageError(
      action
        ? `unknown config command '${action}'; the one there is: validate`
        : 'which config command? das config validate <file>',
      HELP,
    );
  }
  if (!file) throw new UsageError('which file? das config validate <file>', HELP);
  if (rest.length > 0) throw new UsageError(`one file at a time, not ${[file, ...rest].join(' ')}`, HELP);
  try {
    const config = loadConfigFile(file);
    if (values.json) io.out(`${JSON.stringify({ file, valid: true, problems: [] }, null, 2)}\n`);
    else {
      io.out(
        `${file}: valid (${config.applications.length} applications, ${config.datasets.length} datasets, ${config.queries?.length ?? 0} queries)\n`,
      );
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (values.json) {
      io.out(`${JSON.stringify({ file, valid: false, problems: error.problems }, null, 2)}\n`);
      throw new CommandFailure();
    }
    throw new CommandFailure(error.message);
  }
}
