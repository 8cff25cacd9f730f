/**
 * What an index job is, as stored in the catalog table when it starts (index-jobs.ts creates it): per dataset the
 * indexes whose keys it writes and removes, how its records are split into segments, and how many there were.
 */
import type { DatasetIndex } from '../catalog/index-registry';

/** What a job does for one dataset. */
export interface DatasetJob {
  /** Indexes whose keys it writes. */
  builds: DatasetIndex[];
  /** Indexes whose keys it removes. */
  drops: DatasetIndex[];
  /** The creation times (ms) of the ids it splits into segments: from the oldest record to the job's start. */
  fromMs: number;
  toMs: number;
  segments: number;
  /** Records the dataset held when the job started: its progress is counted against this. */
  total: number;
  /**
   * Per build number, the position from which the job counts that build's per-value totals (build-totals.ts): the
   * last of its `settlesAt`. Absent for a job made before totals were counted by jobs.
   */
  totalsFrom?: Record<number, string>;
}

export interface JobDefinition {
  id: string;
  createdAt: number;
  datasets: Record<string, DatasetJob>;
  /** Writes a second each segment may make: the job's rate shared by the segments that run at once (0: unpaced). */
  segmentWritesPerSecond: number;
}

/** One segment of a job: the unit the fan-out hands to a worker. */
export interface SegmentRef {
  jobId: string;
  datasetCode: string;
  segment: number;
}
