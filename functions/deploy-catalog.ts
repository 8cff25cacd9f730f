/** Lambda handler of the deploy's custom resources (see shared/catalog-store/catalog-resource.ts). */
import type { CdkCustomResourceHandler } from 'aws-lambda';
import { deploymentDocumentClient } from '../shared/aws/dynamodb';
import { stepFunctionsClient } from '../shared/aws/step-functions';
import { applyDeployResource, type DeployResourceProperties } from '../shared/catalog-store/catalog-resource';

export const handler: CdkCustomResourceHandler<DeployResourceProperties> = (event) =>
  applyDeployResource(event, { dynamo: deploymentDocumentClient(), stepFunctions: () => stepFunctionsClient(false) });
