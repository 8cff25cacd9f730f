/**
 * Runs the `das` command line (bin/das.js) in a child process, as a user would, and collects what it printed and
 * its exit code. The environment starts from the test process's with every `DAS_*` variable the tests rely on
 * emptied, so a developer's own settings never leak into a run; `env` then sets what the test means.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './paths';

export interface DasRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const DAS = path.join(REPO_ROOT, 'bin', 'das.js');

export function runDas(args: string[], env: Record<string, string> = {}): Promise<DasRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DAS, ...args], {
      env: {
        ...process.env,
        DAS_URL: '',
        DAS_APP_CODE: '',
        DAS_ACCESS_KEY: '',
        DAS_SIGNING_SECRET: '',
        DAS_USER_KEY: '',
        // Not the record of a local service someone is running in this checkout.
        DAS_LOCAL_SERVICE_FILE: path.join(tmpdir(), 'das-cli-no-local-service.json'),
        ...env,
      },
    });
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
