/**
 * The custom resource behind every deploy: writes the deployment's configuration (validated again here, secrets
 * already stripped at synth) into the catalog table, so the functions serve exactly the configuration that was
 * deployed. CloudFormation sends an Update whenever the configuration's content changes.
 *
 * The previous version of each backend function is read from the catalog item this deploy replaces (one GetItem
 * before the PutItem): the catalog table is the one place that outlives every deployment, and CloudFormation's
 * old properties would be lost with a failed or rolled-back update.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CdkCustomResourceEvent, CdkCustomResourceResponse } from 'aws-lambda';
import { writeCatalog } from './catalog-store';
import { parseConfig } from './load-config';

/** Properties of the custom resource (CloudFormation passes them as strings). */
export interface CatalogResourceProperties {
  ServiceToken: string;
  TableName: string;
  /** The configuration without key material, as JSON. */
  Config: string;
}

/** One catalog per deployment: a constant id, so a changed configuration is an in-place update, never a replacement. */
const PHYSICAL_RESOURCE_ID = 'catalog';

export async function applyCatalogResource(
  event: CdkCustomResourceEvent<CatalogResourceProperties>,
  client: DynamoDBDocumentClient,
  now: () => number = Date.now,
): Promise<CdkCustomResourceResponse> {
  // On delete the catalog stays: its table belongs to the stateful stack and goes (or stays) with it, and a
  // rollback of a failed update must not leave the running functions without a catalog.
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const { TableName: table, Config: text } = event.ResourceProperties;
  const config = parseConfig(JSON.parse(text), 'deployed configuration');
  await writeCatalog(client, table, config, now);
  return {
    PhysicalResourceId: PHYSICAL_RESOURCE_ID,
    Data: {
      applications: config.applications.length,
      datasets: config.datasets.length,
      functions: config.functions?.length ?? 0,
    },
  };
}
