/**
 * The custom resources behind every deploy (lib/catalog-deployment.ts), one function for both:
 *
 * - `Custom::DeployedCatalog` applies the deployment's configuration (validated again here, secrets already
 *   stripped at synth) to the catalog table: compared with the one applied last and refused as a whole when
 *   incompatible (docs/interface.md §17), which fails the deploy before any function is updated (every function
 *   of the stack depends on this resource); otherwise stored with the index registry it leads to.
 *   CloudFormation sends an Update whenever the configuration's content changes.
 * - `Custom::IndexBuildStart` starts a run of the index jobs' state machine once the catalog is applied and the
 *   state machine is in place (it depends on both): the run builds and drops what the new registry asks for. A
 *   run already going takes the work over instead (shared/indexing/index-jobs.ts), so starting one is harmless.
 *
 * What was applied before (functions' versions, indexes, removed definitions) is read from the catalog item: the
 * catalog table is the one place that outlives every deployment, and CloudFormation's old properties would be
 * lost with a failed or rolled-back update.
 */
import { type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CdkCustomResourceEvent, CdkCustomResourceResponse } from 'aws-lambda';
import { CONFIGURATION_SETTLE_MS } from '../indexing/index-jobs';
import { applyConfiguration } from './catalog-store';
import { parseConfig } from './load-config';

/** Properties of the catalog resource (CloudFormation passes them as strings). */
export interface CatalogResourceProperties {
  ServiceToken: string;
  TableName: string;
  /** The records table: a change is planned against the records it holds. */
  RecordsTableName: string;
  /** The configuration without key material, as JSON. */
  Config: string;
}

/** Properties of the resource that starts the index jobs after a deploy. */
export interface IndexBuildStartProperties {
  ServiceToken: string;
  StateMachineArn: string;
  /** A digest of the applied configuration: a new one makes CloudFormation send an Update, which starts a run. */
  ConfigDigest: string;
}

export type DeployResourceProperties = CatalogResourceProperties | IndexBuildStartProperties;

/** One catalog per deployment: a constant id, so a changed configuration is an in-place update, never a replacement. */
const PHYSICAL_RESOURCE_ID = 'catalog';

export interface DeployClients {
  dynamo: DynamoDBDocumentClient;
  stepFunctions: () => SFNClient;
}

export async function applyDeployResource(
  event: CdkCustomResourceEvent<DeployResourceProperties>,
  clients: DeployClients,
  now: () => number = Date.now,
): Promise<CdkCustomResourceResponse> {
  // On delete the catalog stays: its table belongs to the stateful stack and goes (or stays) with it, and a
  // rollback of a failed update must not leave the running functions without a catalog. Nothing to undo of a start.
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  if (event.ResourceType === 'Custom::IndexBuildStart') {
    const { StateMachineArn } = event.ResourceProperties as IndexBuildStartProperties;
    const started = await clients
      .stepFunctions()
      .send(
        new StartExecutionCommand({ stateMachineArn: StateMachineArn, input: JSON.stringify({ reason: 'deploy' }) }),
      );
    return { PhysicalResourceId: 'index-build-start', Data: { executionArn: started.executionArn ?? '' } };
  }
  const {
    TableName: table,
    RecordsTableName: records,
    Config: text,
  } = event.ResourceProperties as CatalogResourceProperties;
  const config = parseConfig(JSON.parse(text), 'deployed configuration');
  const { plan } = await applyConfiguration(clients.dynamo, { catalog: table, records }, config, {
    now,
    settleMs: CONFIGURATION_SETTLE_MS,
    source: 'deployed configuration',
  });
  return {
    PhysicalResourceId: PHYSICAL_RESOURCE_ID,
    Data: {
      applications: config.applications.length,
      datasets: config.datasets.length,
      functions: config.functions?.length ?? 0,
      indexesToBuild: plan.datasets.reduce((sum, d) => sum + d.indexesToBuild.length, 0),
      indexesToDrop: plan.datasets.reduce((sum, d) => sum + d.indexesToDrop.length, 0),
    },
  };
}
