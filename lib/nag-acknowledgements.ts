/**
 * cdk-nag (v3) findings acknowledged through CDK's native `Validations` API. Every acknowledgement carries a
 * written reason; the id is a rule (`AwsSolutions-APIG2`) or one finding of a rule
 * (`AwsSolutions-IAM5[Resource::*]`), so a new, different finding of the same rule still fails.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

export interface Acknowledgement {
  id: string;
  reason: string;
}

/** Acknowledge findings on a construct and everything under it. */
export function acknowledge(scope: IConstruct, acknowledgements: readonly Acknowledgement[]): void {
  for (const { id, reason } of acknowledgements) Validations.of(scope).acknowledge({ id, reason });
}
