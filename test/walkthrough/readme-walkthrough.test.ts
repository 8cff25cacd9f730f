/**
 * The README's quickstart as a new user runs it: `npm start -- --port <n>` on a fresh store, then every command
 * of its example block, as printed, in order, from the checkout, with no extra flag. Each answers success, and
 * the registered query returns the rows the creates made.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPOSITORY = path.join(__dirname, '..', '..');
const scratch = mkdtempSync(path.join(tmpdir(), 'das-readme-'));
const addressFile = path.join(scratch, 'local-service.json');
// Only this test's server: not the record of one someone runs in this checkout, nor keys from the environment.
const env = {
  ...process.env,
  DAS_LOCAL_SERVICE_FILE: addressFile,
  DAS_URL: '',
  DAS_APP_CODE: '',
  DAS_ACCESS_KEY: '',
  DAS_SIGNING_SECRET: '',
};

/** The quickstart's example commands: the shell block that follows `npm start`'s description. */
function quickstartCommands(): string[] {
  const readme = readFileSync(path.join(REPOSITORY, 'README.md'), 'utf8');
  const quickstart = readme.slice(readme.indexOf('## Quickstart'), readme.indexOf('## Calling the API'));
  const blocks = [...quickstart.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const block = blocks.find((b) => b.includes('npm run -s sign')) as string;
  return block.split('\n').filter((line) => line.trim() !== '');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

let server: ChildProcess;
let banner = '';
let port: number;

beforeAll(async () => {
  port = await freePort();
  server = spawn('npm', ['start', '--', '--port', String(port), '--data-dir', path.join(scratch, 'data')], {
    cwd: REPOSITORY,
    env,
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    server.stdout?.on('data', (chunk) => {
      banner += chunk;
      if (banner.includes('A first signed request')) resolve();
    });
    server.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${banner}`)));
  });
}, 120_000);
/** True while any process of the group npm start made is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the process group npm start made (npm, tsx, the server), and wait for all of it to end: npm itself
 * may exit before the server has handled the signal.
 */
async function stopServer(): Promise<void> {
  const pid = server.pid;
  if (!pid || !groupAlive(pid)) return;
  const exited =
    server.exitCode !== null || server.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => server.once('exit', resolve));
  process.kill(-pid, 'SIGTERM');
  await exited;
  const deadline = Date.now() + 10_000;
  while (groupAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

afterAll(async () => {
  await stopServer();
  rmSync(scratch, { recursive: true, force: true });
});

it('the banner says how other shells reach the server', () => {
  expect(banner).toContain(`Data access service listening on http://127.0.0.1:${port}\n`);
  expect(banner).toContain(`export DAS_URL=http://127.0.0.1:${port}`);
});

it('every example answers success, in order, and the query sums the orders just created', async () => {
  const commands = quickstartCommands();
  expect(commands).toHaveLength(5);
  // biome-ignore lint/suspicious/noExplicitAny: each command answers its own envelope
  const answers: any[] = [];
  for (const command of commands) {
    const { stdout } = await run('sh', ['-c', command], { cwd: REPOSITORY, env });
    const answer = JSON.parse(stdout);
    expect([command, answer.success]).toEqual([command, true]);
    answers.push(answer);
  }
  const [first, second, list, sql, paid] = answers;
  expect(list.data.paging.totalCount).toBe(2);
  expect(list.data.tableData.map((r: { id: string }) => r.id)).toEqual([second.data.id, first.data.id]);
  expect(sql.data).toEqual({
    execSuccess: true,
    execResult: [
      { status: 'new', orders: 1, revenue: 12.5 },
      { status: 'paid', orders: 1, revenue: 30 },
    ],
  });
  expect(paid.data.tableData.map((r: { id: string }) => r.id)).toEqual([second.data.id]);
}, 120_000);

it('the server records where it listens while it runs, and forgets it when stopped', async () => {
  expect(JSON.parse(readFileSync(addressFile, 'utf8'))).toEqual({
    url: `http://127.0.0.1:${port}`,
    pid: expect.any(Number),
  });
  await stopServer();
  expect(existsSync(addressFile)).toBe(false);
});
