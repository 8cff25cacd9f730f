/**
 * `das sql status --stage` run as a user runs it (bin/das.js in a child process) where the AWS SDK finds no
 * credentials, or no region: one line saying what to set, exit code 1, never a stack trace. Secrets Manager's
 * endpoint is a closed local port, so a run that found credentials somewhere would fail differently.
 */

import { tmpdir } from 'node:os';
import path from 'node:path';
import { runDas } from '../../../support/run-das';

const NOWHERE = path.join(tmpdir(), 'das-sql-status-no-aws-config');
/** No credentials anywhere the SDK looks: environment, shared files, SSO, web identity, container, EC2. */
const NO_AWS = {
  AWS_ACCESS_KEY_ID: '',
  AWS_SECRET_ACCESS_KEY: '',
  AWS_SESSION_TOKEN: '',
  AWS_PROFILE: '',
  AWS_SHARED_CREDENTIALS_FILE: NOWHERE,
  AWS_CONFIG_FILE: NOWHERE,
  AWS_WEB_IDENTITY_TOKEN_FILE: '',
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '',
  AWS_CONTAINER_CREDENTIALS_FULL_URI: '',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:9',
  AWS_ENDPOINT_URL_RDS_DATA: 'http://127.0.0.1:9',
};

it('without AWS credentials: one line naming what to set, exit code 1', async () => {
  const run = await runDas(['sql', 'status', '--stage', 'dev'], { ...NO_AWS, AWS_REGION: 'eu-west-1' });
  expect(run).toEqual({
    code: 1,
    stdout: '',
    stderr:
      "das sql status: no AWS credentials to reach stage 'dev': set AWS_PROFILE, or AWS_ACCESS_KEY_ID and " +
      'AWS_SECRET_ACCESS_KEY (the AWS SDK looks where the AWS CLI does)\n',
  });
}, 30_000);

it('without an AWS region: one line naming what to set, exit code 1', async () => {
  const run = await runDas(['sql', 'status', '--stage', 'dev', '--json'], {
    ...NO_AWS,
    AWS_ACCESS_KEY_ID: 'AKIDSTAGE',
    AWS_SECRET_ACCESS_KEY: 'stage-secret',
    AWS_REGION: '',
    AWS_DEFAULT_REGION: '',
  });
  expect(run).toEqual({
    code: 1,
    stdout: '',
    stderr:
      "das sql status: no AWS region: set AWS_REGION (or the profile's region) to the one stage 'dev' is deployed in\n",
  });
}, 30_000);
