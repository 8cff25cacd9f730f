/**
 * `npm start` as a user runs it, for the tests that follow the docs: on a free port, a fresh store, and an address
 * record of the test's own (never the checkout's, which says where a developer's own server listens). It is
 * stopped as a terminal's Ctrl-C would: the whole process group npm made (npm, its shell, the server).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './free-port';

export interface NpmStart {
  url: string;
  port: number;
  /** What it printed until it was ready: the banner. */
  banner: string;
  /** Stop it and wait until every process of its group has ended. */
  stop(): Promise<void>;
}

/** True while any process of the group `pid` leads is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm start -- --port <free> --data-dir <scratch>/data` in `cwd`, once its banner is out. `env` is the whole
 * environment of the server (the caller decides which variables it keeps).
 */
export async function startNpmStart(cwd: string, scratch: string, env: NodeJS.ProcessEnv): Promise<NpmStart> {
  const port = await freePort();
  const server: ChildProcess = spawn(
    'npm',
    ['start', '--', '--port', String(port), '--data-dir', path.join(scratch, 'data')],
    { cwd, env, detached: true },
  );
  let banner = '';
  await new Promise<void>((resolve, reject) => {
    server.stdout?.on('data', (chunk) => {
      banner += chunk;
      if (banner.includes('A first signed request')) resolve();
    });
    server.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${banner}`)));
  });
  const stop = async () => {
    const pid = server.pid;
    if (!pid || !groupAlive(pid)) return;
    // npm itself may exit before the server has handled the signal: wait for the whole group.
    const exited =
      server.exitCode !== null || server.signalCode !== null
        ? Promise.resolve()
        : new Promise((resolve) => server.once('exit', resolve));
    process.kill(-pid, 'SIGTERM');
    await exited;
    const deadline = Date.now() + 10_000;
    while (groupAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  return { url: `http://127.0.0.1:${port}`, port, banner, stop };
}
