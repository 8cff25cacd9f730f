/**
 * Who is calling, as authentication resolves it: an application, the user a personal access key acts for (if
 * any), and the grants the call may use. Every way in (signed application requests, client keys, partner hooks)
 * yields a caller, and everything after authentication works from it, so the permission code is the same for all.
 */
import type { Application, Catalog } from '../catalog/catalog';
import type { GrantConfig } from '../catalog/schema';

export interface CallerUser {
  /** The user's id as the key store knows it; shown in logs, never in answers to other callers. */
  userId: string;
  /** What GET /client/user/loginUserInfo answers about the user (docs/interface.md §14). */
  userName: string;
  loginName: string;
  role?: string;
}

export interface Caller {
  readonly application: Application;
  /** The user a personal access key acts for; absent when the application itself signs. */
  readonly user?: CallerUser;
  /** The grants this caller holds, by dataset code: the application's, or a user's narrower set. */
  readonly grants: ReadonlyMap<string, GrantConfig>;
}

/** An application calling on its own behalf: it holds exactly the application's grants. */
export function applicationCaller(application: Application): Caller {
  return { application, grants: application.grants };
}

/**
 * What authentication establishes, whichever way the request came in: the catalog it is checked against, who
 * calls, and the dataset code it names (well formed; whether the dataset exists is access's question).
 */
export interface Authentication {
  readonly catalog: Catalog;
  readonly caller: Caller;
  readonly datasetCode: string | undefined;
}
