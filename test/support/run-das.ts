/**
 * Runs the `das` command line (bin/das.js) in a child process, as a user would, and collects what it printed and
 * its exit code. The environment starts from the test process's with every `DAS_*` variable the tests rely on
 * emptied, so a developer's own settings never leak into a run; `env` then sets what the test means. `das serve`
 * runs the same way, kept running until the test stops it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './paths';

export interface DasRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const DAS = path.join(REPO_ROOT, 'bin', 'das.js');

function dasEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DAS_URL: '',
    DAS_APP_CODE: '',
    DAS_ACCESS_KEY: '',
    DAS_SIGNING_SECRET: '',
    DAS_USER_KEY: '',
    // Not the record of a local service someone is running in this checkout.
    DAS_LOCAL_SERVICE_FILE: path.join(tmpdir(), 'das-cli-no-local-service.json'),
    ...env,
  };
}

export function runDas(args: string[], env: Record<string, string> = {}): Promise<DasRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DAS, ...args], { env: dasEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface DasServer {
  url: string;
  pid: number;
  /** What it printed so far. */
  output(): string;
  /** SIGTERM, and its exit code once it has stopped. */
  stop(): Promise<number | null>;
}

/**
 * `das serve` with these arguments, once it prints where it listens. It records its address where the test
 * process's DAS_LOCAL_SERVICE_FILE says (test/setup-env.js) unless `env` names another file.
 */
export function startDasServe(args: string[], env: Record<string, string> = {}): Promise<DasServer> {
  const record = process.env.DAS_LOCAL_SERVICE_FILE as string;
  const child: ChildProcess = spawn(process.execPath, [DAS, 'serve', ...args], {
    env: dasEnv({ DAS_LOCAL_SERVICE_FILE: record, ...env }),
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match)
        resolve({
          url: match[1] as string,
          pid: child.pid as number,
          output: () => output,
          stop: () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            return exited;
          },
        });
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    child.once('exit', (code) => reject(new Error(`das serve exited with ${code}: ${output}`)));
  });
}
