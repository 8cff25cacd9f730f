/** Lambda handler of the catalog custom resource (see shared/catalog-store/catalog-resource.ts). */
import type { CdkCustomResourceHandler } from 'aws-lambda';
import { deploymentDocumentClient } from '../shared/aws/dynamodb';
import { applyCatalogResource, type CatalogResourceProperties } from '../shared/catalog-store/catalog-resource';

export const handler: CdkCustomResourceHandler<CatalogResourceProperties> = (event) =>
  applyCatalogResource(event, deploymentDocumentClient());
