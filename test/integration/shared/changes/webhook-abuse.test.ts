/**
 * docs/interface.md §18, webhooks against abuse: a deployment refuses a webhook URL that is not https or names a
 * private, loopback or link-local address, and a secret in the file; any configuration refuses a subscription whose
 * application may not read a dataset; the sender follows no redirect, reads at most 64 KB of an answer, and in a
 * deployment refuses a receiver whose name resolves to a non-public address.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, checkDeploymentConfig, parseConfig } from '../../../../shared/catalog-store/load-config';
import { httpWebhookTransport, MAX_ANSWER_BYTES } from '../../../../shared/changes/webhook-transport';

const BASE = {
  applications: [
    { appCode: 'owner', grants: [{ datasetCode: 'orders', operations: ['read'] }] },
    { appCode: 'writer', grants: [{ datasetCode: 'orders', operations: ['create'] }] },
  ],
  datasets: [{ appCode: 'owner', datasetCode: 'orders', fields: [{ name: 'customer', type: 'string' }] }],
};

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => `${p.path}: ${p.message}`);
    throw error;
  }
  return [];
}

describe('webhook configuration', () => {
  it('refuses a subscription of an application that may not read the dataset', () => {
    const config = {
      ...BASE,
      webhooks: [{ id: 'w', appCode: 'writer', url: 'https://example.com/h', datasets: ['orders'] }],
    };
    expect(problemsOf(() => parseConfig(config)).join('\n')).toMatch(/^webhooks\[0\]\.datasets\[0\]: .*read/m);
  });

  it('refuses non-https, private, loopback and link-local URLs and file secrets in a deployment, not locally', () => {
    const urls = [
      'http://example.com/h',
      'https://127.0.0.1/h',
      'https://10.1.2.3/h',
      'https://169.254.169.254/latest',
      'https://[::1]/h',
      'https://localhost/h',
    ];
    const webhooks = urls.map((url, i) => ({ id: `w${i}`, appCode: 'owner', url, datasets: ['orders'] }));
    const config = parseConfig({ ...BASE, webhooks }); // locally: all allowed
    expect(config.webhooks).toHaveLength(6);
    const problems = problemsOf(() => checkDeploymentConfig(config));
    expect(problems).toEqual([
      'webhooks[0].url: must be an https URL in a deployment (http is allowed only locally)',
      "webhooks[1].url: must not point at a private, loopback or link-local address ('127.0.0.1') in a deployment",
      "webhooks[2].url: must not point at a private, loopback or link-local address ('10.1.2.3') in a deployment",
      "webhooks[3].url: must not point at a private, loopback or link-local address ('169.254.169.254') in a deployment",
      "webhooks[4].url: must not point at a private, loopback or link-local address ('[::1]') in a deployment",
      "webhooks[5].url: must not point at a private, loopback or link-local address ('localhost') in a deployment",
    ]);
    const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const withSecret = parseConfig({
      ...BASE,
      webhooks: [{ id: 'w', appCode: 'owner', url: 'https://example.com/h', datasets: ['orders'], secret }],
    });
    expect(problemsOf(() => checkDeploymentConfig(withSecret))).toEqual([
      "webhooks[0].secret: is for local runs only: a deployment generates each subscription's secret in the secret store",
    ]);
    expect(
      problemsOf(() =>
        checkDeploymentConfig(
          parseConfig({
            ...BASE,
            webhooks: [{ id: 'w', appCode: 'owner', url: 'https://example.com/h', datasets: ['orders'] }],
          }),
        ),
      ),
    ).toEqual([]);
  });
});

describe('the webhook sender', () => {
  let server: Server;
  let base: string;
  let answered = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        answered += 1;
        if (request.url === '/redirect') response.writeHead(307, { Location: '/elsewhere' }).end();
        else if (request.url === '/large') {
          response.writeHead(200);
          response.end(Buffer.alloc(1024 * 1024, 97));
        } else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('does not follow a redirect: the 307 is the answer, a failed attempt', async () => {
    const before = answered;
    const attempt = await httpWebhookTransport({ allowNonPublic: true }).post(`${base}/redirect`, {}, '{}');
    expect(attempt.status).toBe(307);
    expect(answered - before).toBe(1);
  });

  it('reads at most 64 KB of an answer', async () => {
    const attempt = await httpWebhookTransport({ allowNonPublic: true }).post(`${base}/large`, {}, '{}');
    expect(attempt.status).toBe(200);
    expect(attempt.answerBytes).toBe(MAX_ANSWER_BYTES);
  });

  it('in a deployment, refuses a loopback address and a name that resolves to one, sending nothing', async () => {
    const before = answered;
    const deployed = httpWebhookTransport({ allowNonPublic: false });
    const literal = await deployed.post(`${base}/ok`, {}, '{}');
    expect(literal).toMatchObject({ error: 'refused: 127.0.0.1 is a non-public address' });
    expect(literal.status).toBeUndefined();
    const port = new URL(base).port;
    const named = await httpWebhookTransport({
      allowNonPublic: false,
      lookup: ((
        _host: string,
        _options: unknown,
        callback: (e: null, a: { address: string; family: number }[]) => void,
      ) => callback(null, [{ address: '127.0.0.1', family: 4 }])) as never,
    }).post(`http://receiver.example.com:${port}/ok`, {}, '{}');
    expect(named.error).toMatch(/refused: receiver\.example\.com resolves to a non-public address \(127\.0\.0\.1\)/);
    expect(answered).toBe(before);
  });
});
