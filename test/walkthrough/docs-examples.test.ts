/**
 * Every shell example of README.md and docs/*.md, run as printed (README, "Examples in the docs"). `npm start --
 * --port <free>` runs on a fresh store; each `sh` block then runs as one `sh -e` script in a fresh shell where
 * the banner's `export DAS_URL=…` line was run, from the root of a copy of the repository (its tracked and new
 * files; node_modules linked), so examples that write files (records.json, config/partner.json) leave the
 * checkout as it was. The blocks of one file run in order on one copy: a block may use a file an earlier block of
 * its file wrote. A block passes when it exits 0 and prints no failure envelope (`"success": false`).
 *
 * Fences are checked too (test/support/doc-examples.ts): `sh aws` (needs an AWS account) and `sh setup`
 * (installs, starts the service, runs the tests) are not run, and each must hold such a command; a fence without
 * an info string or a shell named otherwise is refused. A failure names the file, the block's line and why.
 */
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CodeBlock, codeBlocks, documentationFiles, fenceProblem } from '../support/doc-examples';
import { type NpmStart, startNpmStart } from '../support/npm-start';
import { REPO_ROOT } from '../support/paths';

const scratch = mkdtempSync(path.join(tmpdir(), 'das-doc-examples-'));
const addressFile = path.join(scratch, 'local-service.json');

/**
 * A user's shell: nothing of npm's own variables (this test may run under `npm test`), no keys of the developer's,
 * and the test's own address record. DAS_URL comes with the server.
 */
function userEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|INIT_CWD$|DAS_)/.test(name)) env[name] = value;
  }
  return { ...env, DAS_LOCAL_SERVICE_FILE: addressFile, npm_config_audit: 'false', npm_config_fund: 'false' };
}

/** A copy of the checkout's tracked and new (not ignored) files, with its node_modules linked. */
function copyOfRepository(name: string): string {
  const copy = path.join(scratch, name, 'data-access-service');
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    cpSync(path.join(REPO_ROOT, file), path.join(copy, file), { dereference: false, errorOnExist: false });
  }
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  return copy;
}

interface BlockRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBlock(block: CodeBlock, cwd: string, env: NodeJS.ProcessEnv): Promise<BlockRun> {
  return new Promise((resolve) => {
    // -x: the trace on standard error says which command a failure came from.
    execFile(
      'sh',
      ['-e', '-x', '-c', block.text],
      { cwd, env, maxBuffer: 64 << 20, timeout: 180_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Why a block failed, for the one who wrote it: where it is, the command, and what it printed. */
function failureOf(block: CodeBlock, result: BlockRun): string | undefined {
  const lastCommand = [...result.stderr.matchAll(/^\++ (.*)$/gm)].map((m) => m[1]).pop() ?? '(none ran)';
  const envelope = /"success"\s*:\s*false/.test(result.stdout);
  if (result.code === 0 && !envelope) return undefined;
  const why =
    result.code === 0
      ? 'it printed a failure envelope ("success": false)'
      : `it exited with ${result.code ?? 'a signal or a time-out'}`;
  return [
    `${block.file}:${block.line}: this \`sh\` example does not run as printed: ${why}.`,
    `Last command: ${lastCommand}`,
    `The service of this run: DAS_URL=${env.DAS_URL} (an example reaches it through "$DAS_URL" or das, never a port).`,
    '--- standard output (end)',
    tail(result.stdout, 15),
    '--- standard error (end)',
    tail(result.stderr, 15),
    '--- the example',
    block.text.trimEnd(),
    'Fix the example, or fence it as `sh aws` if it needs an AWS account (README, "Examples in the docs").',
  ].join('\n');
}

const files = documentationFiles(REPO_ROOT);
const blocks = new Map(files.map((file) => [file, codeBlocks(REPO_ROOT, file)]));
let server: NpmStart;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  server = await startNpmStart(REPO_ROOT, scratch, userEnvironment());
  // As the banner tells other shells to.
  env = { ...userEnvironment(), DAS_URL: server.url };
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

it('every fence names its kind, and the README and docs hold shell examples to run', () => {
  const problems = files.flatMap((file) =>
    (blocks.get(file) ?? []).flatMap((block) => {
      const problem = fenceProblem(block);
      return problem ? [`${block.file}:${block.line}: ${problem}`] : [];
    }),
  );
  expect(problems).toEqual([]);
  const runnable = (file: string) => (blocks.get(file) ?? []).filter((b) => b.info === 'sh').length;
  expect([runnable('README.md') > 0, runnable('docs/calling.md') > 0]).toEqual([true, true]);
});

describe.each(files.filter((file) => blocks.get(file)?.some((b) => b.info === 'sh')))('%s', (file) => {
  let copy: string;
  beforeAll(() => {
    copy = copyOfRepository(file.replace(/\W+/g, '-'));
  });

  it.each((blocks.get(file) ?? []).filter((b) => b.info === 'sh').map((b) => [`line ${b.line}`, b]))(
    'the `sh` example at %s runs as printed',
    async (_at, block) => {
      const failure = failureOf(block, await runBlock(block, copy, env));
      if (failure) throw new Error(failure);
    },
    240_000,
  );
});
