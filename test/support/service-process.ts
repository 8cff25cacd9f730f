/**
 * The local service as a user runs it: `das serve` (what `npm start` runs) in a child process of its own, with
 * the options given, on a free port. Tests that restart the service on the same data directory, or that need
 * its exit code and what it printed, use this instead of the in-process harness.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signRequest } from '../../packages/client/src/signature';
import { REPO_ROOT } from './paths';

const DAS = path.join(REPO_ROOT, 'bin', 'das.js');

export interface ServiceProcess {
  url: string;
  /** What it printed so far (standard output and error together). */
  output(): string;
  stop(): Promise<void>;
}

export interface ServiceExit {
  code: number | null;
  output: string;
}

/** The environment of a child service or command: none of a developer's own `DAS_*` settings. */
export const CHILD_ENV = {
  ...process.env,
  DAS_URL: '',
  DAS_APP_CODE: '',
  DAS_ACCESS_KEY: '',
  DAS_SIGNING_SECRET: '',
  DAS_USER_KEY: '',
  DAS_LOCAL_SERVICE_FILE: path.join(tmpdir(), `das-test-service-${process.pid}.json`),
};

function spawnServe(args: string[]): ChildProcess {
  return spawn(process.execPath, [DAS, 'serve', '--port', '0', '--log', 'json', '--quiet', ...args], {
    cwd: REPO_ROOT,
    env: CHILD_ENV,
  });
}

/** Start `das serve` with `args`; resolves once it listens, rejects when it exits first. */
export function startServiceProcess(args: string[]): Promise<ServiceProcess> {
  const child = spawnServe(args);
  let printed = '';
  child.stdout?.on('data', (chunk) => {
    printed += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    printed += chunk;
  });
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`das serve exited with ${code}:\n${printed}`));
    child.once('exit', exited);
    const listening = () => {
      const match = /listening on (http:\/\/\S+)/.exec(printed);
      if (!match) return;
      child.stdout?.off('data', listening);
      child.off('exit', exited);
      resolve({
        url: match[1] as string,
        output: () => printed,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', listening);
  });
}

/** Run `das serve` with `args` expecting it to stop by itself (a refused configuration): its exit code and output. */
export function serviceExit(args: string[]): Promise<ServiceExit> {
  const child = spawnServe(args);
  let printed = '';
  child.stdout?.on('data', (chunk) => {
    printed += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    printed += chunk;
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGTERM'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: printed });
    });
  });
}

export interface DemoApp {
  appCode: string;
  accessKey: string;
  secret: string;
}

/** The demo configuration's back office application (config/demo.json). */
export const DEMO_APP: DemoApp = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', secret: 'sk-demo-secret' };

/** POST a signed request to a data operation of a service process; answers the envelope. */
export async function callService(
  url: string,
  operation: string,
  datasetCode: string,
  body: Record<string, unknown>,
  app: DemoApp = DEMO_APP,
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever shape the operation answers
): Promise<any> {
  const timeStamp = String(Date.now());
  const token = signRequest({ accessKey: app.accessKey, appCode: app.appCode, datasetCode, timeStamp }, app.secret);
  const response = await fetch(`${url}/openapi/data/${operation}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': app.appCode,
      'X-Dataset-Code': datasetCode,
      'X-Token': token,
    },
    body: JSON.stringify({ appCode: app.appCode, datasetCode, ...body }),
  });
  return response.json();
}
