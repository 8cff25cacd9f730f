/**
 * The custom resource behind every deploy: writes the deployment's configuration (validated again here, secrets
 * already stripped at synth) into the catalog table, so the functions serve exactly the configuration that was
 * deployed. CloudFormation sends an Update whenever the configuration's content changes.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CdkCustomResourceHandler } from 'aws-lambda';
import { createDocumentClient } from '../shared/aws/dynamodb';
import { writeCatalog } from '../shared/catalog/catalog-store';
import { parseConfig } from '../shared/catalog/load-config';

/** Properties of the custom resource (CloudFormation passes them as strings). */
interface CatalogResourceProperties {
  ServiceToken: string;
  TableName: string;
  /** The configuration without key material, as JSON. */
  Config: string;
}

// Not `dynamoDocumentClient()`: that one reads the operations' environment (records table, secrets), which this
// function has no business knowing; the table arrives as a resource property instead.
const client = createDocumentClient(new DynamoDBClient({ maxAttempts: 5 }));

/** One catalog per deployment: a constant id, so a changed configuration is an in-place update, never a replacement. */
const PHYSICAL_RESOURCE_ID = 'catalog';

export const handler: CdkCustomResourceHandler<CatalogResourceProperties> = async (event) => {
  // On delete the catalog stays: its table belongs to the stateful stack and goes (or stays) with it, and a
  // rollback of a failed update must not leave the running functions without a catalog.
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const { TableName: table, Config: text } = event.ResourceProperties;
  const config = parseConfig(JSON.parse(text), 'deployed configuration');
  await writeCatalog(client, table, config);
  return {
    PhysicalResourceId: PHYSICAL_RESOURCE_ID,
    Data: { applications: config.applications.length, datasets: config.datasets.length },
  };
};
