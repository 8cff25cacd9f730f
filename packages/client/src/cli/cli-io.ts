/**
 * How `das` commands talk to the terminal: usage errors (exit code 2, with a pointer to --help), failures
 * (exit code 1), and option parsing that turns node:util's parse errors into sentences a user can act on.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** The command line itself is wrong: exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly helpCommand: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command ran and failed (a refused configuration, a failure envelope): exit code 1. */
export class CommandFailure extends Error {
  constructor(message = '') {
    super(message);
    this.name = 'CommandFailure';
  }
}

export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /**
   * What a checkout of the service adds (its `das` passes these): the configuration whose local keys sign when
   * no key is given, a loader that validates it, and where the local service it started listens.
   */
  workspace?: {
    defaultConfig: string;
    loadConfig(file: string): LocalKeysConfig;
    localServiceUrl(): string | undefined;
  };
}

/** What `das` reads of a configuration file (docs/interface.md §9): the applications' local keys, grants and signature version. */
export interface LocalKeysConfig {
  defaultSigningSecret?: string | undefined;
  applications: {
    appCode: string;
    accessKey?: string | string[] | undefined;
    signingSecret?: string | undefined;
    grants?: { datasetCode: string }[] | undefined;
    /** 2: the application accepts only version-2 signatures (docs/interface.md §16). */
    signatureVersion?: 1 | 2 | undefined;
  }[];
}

export const processIo: CommandIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

/** `parseArgs` with strict options; an unknown option or a missing value becomes a `UsageError`. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  helpCommand: string,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    // node:util's messages are good ("Unknown option '--foo'"); only the hint is ours.
    throw new UsageError((error as Error).message, helpCommand);
  }
}

/** A whole number option, or undefined when absent. */
export function integerOption(value: string | undefined, name: string, helpCommand: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, not '${value}'`, helpCommand);
  return Number(value);
}
