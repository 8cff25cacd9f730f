/**
 * The index jobs' function may do to the records table what its steps do: read a segment's records and write their
 * index keys, and at a job's end write a build's count pages (PutItem, DeleteItem of a former list), fold the claims
 * written meanwhile (BatchGetItem of records) and delete a dropped index's totals (BatchWriteItem).
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { arnOf, buildService, logicalIdOf } from '../../support/service-fixture';

let template: Template;

beforeAll(() => {
  template = buildService().statelessTemplate;
});

it("grants the index jobs' role the reads and writes of a job's segments and of its end on the records table", () => {
  const roleId = logicalIdOf(template, 'AWS::IAM::Role', '/IndexBuilds/Role/');
  template.hasResourceProperties('AWS::IAM::Policy', {
    Roles: [{ Ref: roleId }],
    PolicyDocument: {
      Statement: Match.arrayWith([
        {
          Effect: 'Allow',
          Action: [
            'dynamodb:BatchGetItem',
            'dynamodb:BatchWriteItem',
            'dynamodb:DeleteItem',
            'dynamodb:GetItem',
            'dynamodb:PutItem',
            'dynamodb:UpdateItem',
          ],
          Resource: arnOf('dynamodb', 'table/data-access-service-dev-records'),
        },
      ]),
    },
  });
});
