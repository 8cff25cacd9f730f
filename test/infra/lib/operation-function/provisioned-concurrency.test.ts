/**
 * Provisioned concurrency (`-c provisionedConcurrency=get-one=2`, docs/deploying.md): the operation's function
 * publishes a version with each deploy, the alias `live` carries the provisioned containers, and the API invokes
 * that alias, so its requests reach initialised containers. Operations without it are invoked as before.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { buildService, logicalIdOf } from '../../../support/service-fixture';

let template: Template;
let plain: Template;

beforeAll(() => {
  template = buildService({ context: { provisionedConcurrency: 'get-one=2,create=1' } }).statelessTemplate;
  plain = buildService().statelessTemplate;
});

const functionId = (operation: string, of: Template = template) =>
  logicalIdOf(of, 'AWS::Lambda::Function', `/Op-${operation}/Function/`);
const aliasId = (operation: string) => logicalIdOf(template, 'AWS::Lambda::Alias', `/Op-${operation}/Live/`);

it('keeps the given number of containers initialised behind the alias live of a published version', () => {
  const aliases = template.findResources('AWS::Lambda::Alias');
  expect(Object.keys(aliases)).toHaveLength(2);
  for (const [operation, count] of [
    ['get-one', 2],
    ['create', 1],
  ] as const) {
    const alias = aliases[aliasId(operation)];
    expect(alias?.Properties).toEqual({
      Name: 'live',
      FunctionName: { Ref: functionId(operation) },
      FunctionVersion: { 'Fn::GetAtt': [expect.stringMatching(/CurrentVersion/), 'Version'] },
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: count },
    });
  }
  template.resourceCountIs('AWS::Lambda::Version', 2);
});

it('sends the operation’s signed and /client/ requests to the alias, and lets API Gateway invoke only it', () => {
  const alias = aliasId('get-one');
  const methods = Object.values(template.findResources('AWS::ApiGateway::Method')).filter((method) =>
    JSON.stringify(method.Properties.Integration?.Uri ?? '').includes(alias),
  );
  expect(methods).toHaveLength(2);
  for (const method of methods) expect(JSON.stringify(method.Properties.Integration.Uri)).not.toContain('GetAtt');
  const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter(
    (permission) => permission.Properties.Principal === 'apigateway.amazonaws.com',
  );
  const toAlias = permissions.filter(
    (p) => JSON.stringify(p.Properties.FunctionName) === JSON.stringify({ Ref: alias }),
  );
  expect(toAlias.length).toBeGreaterThan(0);
  const toFunction = permissions.filter((p) =>
    JSON.stringify(p.Properties.FunctionName).includes(functionId('get-one')),
  );
  expect(toFunction).toEqual([]);
});

it('invokes the other operations’ functions directly, with no version or alias', () => {
  template.hasResourceProperties('AWS::ApiGateway::Method', {
    Integration: Match.objectLike({
      Uri: Match.objectLike({
        'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [functionId('get-list'), 'Arn'] }])],
      }),
    }),
  });
  plain.resourceCountIs('AWS::Lambda::Alias', 0);
  plain.resourceCountIs('AWS::Lambda::Version', 0);
});
