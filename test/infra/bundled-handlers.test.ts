/**
 * What deploys is what was tested: the bundles `cdk synth` produced (not the TypeScript sources) run behind the
 * local HTTP server against dynalite, and answer signed requests as the contract says.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ProxyHandler } from '../../bin/local/lambda-http';
import { type LocalServer, startLocalServer } from '../../bin/local-server';
import { FIXTURE_CONFIG, failureWith, MAIN_APP, ServiceHarness } from '../support/service-harness';
import { type BuiltService, buildService, logicalIdOf, PROJECT_ROOT } from './service-fixture';

// Inside the repository, so the bundles resolve the externalized @aws-sdk/* from its node_modules, as they
// resolve them from the Lambda runtime in AWS.
const OUTDIR = join(PROJECT_ROOT, 'cdk.out', `infra-test-${process.pid}`);

/** The integration harness's client, pointed at a local server that runs the synthesized bundles. */
class BundledHarness extends ServiceHarness {
  readonly loaded: string[] = [];
  private bundled: LocalServer | undefined;

  constructor(private readonly service: BuiltService) {
    super(FIXTURE_CONFIG);
  }

  private bundleOf(functionFile: string): string {
    const template = this.service.statelessTemplate;
    const id = logicalIdOf(template, 'AWS::Lambda::Function', `/Op-${functionFile}/Function/`);
    const assetPath: string = template.toJSON().Resources[id].Metadata['aws:asset:path'];
    return join(this.service.app.outdir, assetPath, 'index.js');
  }

  override async start(): Promise<this> {
    this.bundled = await startLocalServer({
      configFile: FIXTURE_CONFIG,
      port: 0,
      loadHandler: async (functionFile) => {
        // A route whose handler is not written yet has only a stand-in bundle: serve nothing for it.
        if (!existsSync(join(PROJECT_ROOT, 'functions', `${functionFile}.ts`))) return undefined;
        const bundle = this.bundleOf(functionFile);
        this.loaded.push(bundle);
        return (require(bundle) as { handler: ProxyHandler }).handler;
      },
    });
    return this;
  }

  override async stop(): Promise<void> {
    await this.bundled?.close();
  }

  override get url(): string {
    if (!this.bundled) throw new Error('harness not started');
    return this.bundled.url;
  }
}

let harness: BundledHarness;
const logLines: Array<Record<string, unknown>> = [];
let restoreStdout: () => void;

beforeAll(async () => {
  const service = buildService({ bundle: true, outdir: OUTDIR });
  harness = await new BundledHarness(service).start();
  // The bundles carry their own copy of the request log, which writes to standard output as in Lambda.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.startsWith('{')) {
      logLines.push(JSON.parse(text));
      return true;
    }
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  restoreStdout = () => {
    process.stdout.write = write;
  };
}, 120_000);

afterAll(async () => {
  restoreStdout();
  await harness.stop();
  rmSync(OUTDIR, { recursive: true, force: true });
});

describe('synthesized bundles behind the local server', () => {
  it('loads every operation from cdk.out, not from functions/', () => {
    // The data operations at least; execute-sql too once its handler exists.
    expect(harness.loaded.length).toBeGreaterThanOrEqual(4);
    for (const file of harness.loaded)
      expect(file).toMatch(/cdk\.out\/infra-test-\d+\/asset\.[0-9a-f]{64}\/index\.js$/);
  });

  it('creates, reads, updates and lists a record', async () => {
    const created = await harness.create('notes', { title: 'from the bundle' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true });
    const id = created.body.data.id ?? created.body.data;

    const one = await harness.getOne('notes', id);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id, title: 'from the bundle' });

    const updated = await harness.update('notes', { id, title: 'changed by the bundle' });
    expect(updated.status).toBe(200);

    const list = await harness.getList('notes', { currentPage: 1, pageSize: 10 });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body.data)).toContain('changed by the bundle');
  });

  it('answers a request signed with the wrong secret with 1002 and 401', async () => {
    const result = await harness.getList('notes', {}, { app: { ...MAIN_APP, secret: 'not-the-secret' } });
    expect(result.status).toBe(401);
    expect(result.body).toEqual(failureWith(1002));
  });

  it('answers an unknown application with 1004 and 404', async () => {
    const result = await harness.getList('notes', {}, { app: { ...MAIN_APP, appCode: 'app-nobody' } });
    expect(result.status).toBe(404);
    expect(result.body).toEqual(failureWith(1004));
  });

  it('writes one JSON log line per request, with the operation', () => {
    const operations = logLines.map((line) => line.operation);
    expect(operations).toEqual(expect.arrayContaining(['create', 'get-one', 'update', 'get-list']));
    for (const line of logLines) expect(line).toHaveProperty('requestId');
  });
});
