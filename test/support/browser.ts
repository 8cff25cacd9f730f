/**
 * The browser the browser tests drive, found with nothing installed by hand: `CHROMIUM_PATH` when it is set (it
 * wins, whatever else the machine has), otherwise the Chromium build the lockfile pins, `@sparticuz/chromium`,
 * which ships it brotli-compressed inside the npm package. That build is unpacked once per version into the
 * checkout's `node_modules/.cache/data-access-service/`, so `npm ci && npm test` needs no system package and no
 * download. A system chromium is never picked up by itself: every machine runs the same browser unless told.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { REPO_ROOT } from './paths';

const run = promisify(execFile);
const PACKAGE = '@sparticuz/chromium';

/** Where the packaged build is unpacked: per checkout and per version, so a version bump never reuses an old one. */
function packagedBrowserDir(): string {
  const manifest = path.join(REPO_ROOT, 'node_modules', ...PACKAGE.split('/'), 'package.json');
  if (!existsSync(manifest)) {
    throw new Error(`${PACKAGE} is not installed: run \`npm ci\` (it is a devDependency), or set CHROMIUM_PATH`);
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return path.join(REPO_ROOT, 'node_modules', '.cache', 'data-access-service', `chromium-${version}`);
}

/**
 * The packaged Chromium, unpacked on first use. The package unpacks into the OS temporary directory and reuses
 * any `chromium` it finds there, whoever wrote it, so it runs in a child process whose TMPDIR is a fresh
 * staging directory; the staging directory then becomes the cache entry in one rename, so a test run beside
 * another never starts a half-written browser.
 */
async function packagedChromium(): Promise<string> {
  const dir = packagedBrowserDir();
  const executable = path.join(dir, 'chromium');
  if (existsSync(executable)) return executable;
  mkdirSync(path.dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.partial-`);
  try {
    await run(process.execPath, ['-e', `require(${JSON.stringify(PACKAGE)}).executablePath()`], {
      cwd: REPO_ROOT,
      env: { ...process.env, TMPDIR: staging },
    });
    try {
      renameSync(staging, dir);
    } catch (error) {
      // Another run unpacked the same version first: use that one.
      if (!existsSync(executable)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return executable;
}

/** The browser's executable: `CHROMIUM_PATH` when set, else the lockfile's Chromium. */
export async function browserExecutable(): Promise<string> {
  const explicit = process.env.CHROMIUM_PATH;
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`CHROMIUM_PATH names ${explicit}, which does not exist`);
    return explicit;
  }
  return packagedChromium();
}

/** A headless Chromium driven by playwright-core, with nothing of the network it does not need. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = await browserExecutable();
  try {
    return await chromium.launch({
      executablePath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  } catch (error) {
    throw new Error(
      `the browser at ${executablePath} did not start (${(error as Error).message.split('\n')[0]}); ` +
        'CHROMIUM_PATH=/path/to/chromium runs the browser tests in another Chromium',
      { cause: error },
    );
  }
}
