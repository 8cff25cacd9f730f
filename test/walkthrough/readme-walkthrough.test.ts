/**
 * The README's quickstart as a new user runs it: `npm start -- --port <n>` on a fresh store, then every command
 * of its example block, as printed, in order, from the checkout, with no extra flag. Each answers success, and
 * the registered query returns the rows the creates made.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type CodeBlock, codeBlocks, commandLines } from '../support/doc-examples';
import { type NpmStart, startNpmStart } from '../support/npm-start';

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

/** The quickstart's example commands: the README's first `sh` block, which follows `npm start`'s description. */
function quickstartCommands(): string[] {
  const block = codeBlocks(REPOSITORY, 'README.md').find((b) => b.info === 'sh') as CodeBlock;
  return commandLines(block.text);
}

let server: NpmStart;

beforeAll(async () => {
  server = await startNpmStart(REPOSITORY, scratch, env);
}, 120_000);

afterAll(async () => {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
});

it('the banner says how other shells reach the server', () => {
  expect(server.banner).toContain(`Data access service listening on http://127.0.0.1:${server.port}\n`);
  expect(server.banner).toContain(`export DAS_URL=http://127.0.0.1:${server.port}`);
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
    url: `http://127.0.0.1:${server.port}`,
    pid: expect.any(Number),
    // Where its data is, so das webhooks reaches the same store.
    store: {
      credentialsConfigured: false,
      endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      region: 'local',
      tables: { catalog: 'das-local-catalog', events: 'das-local-events' },
    },
  });
  await server.stop();
  expect(existsSync(addressFile)).toBe(false);
});
