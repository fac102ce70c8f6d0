import type { LocationAccessMode, Role } from '../database/schema.js';
import type { Scope } from './tokens.js';
import { ApiError } from '../errors.js';
import type { CredentialCheck } from './credential-check.js';

/** Who is calling, established once per request by the authentication hook. */
export type Principal =
  /**
   * `credentialCheck`: on a route that defers it (Access `deferCredentialCheck`), whether the
   * token's credential and company are still good is read by the request's first catalog statement
   * instead of a statement of its own (credential-check.ts); absent, the hook has checked them.
   */
  | { kind: 'machine'; companyId: string; clientId: string; scopes: Scope[]; credentialCheck?: CredentialCheck }
  | {
      kind: 'dashboard';
      companyId: string;
      userId: string;
      role: Role;
      locationAccessMode: LocationAccessMode;
      allowedLocationIds: string[];
      linkedResourceId: string | null;
    }
  /** A dashboard JWT without a company (no x-api-key), for routes that need only the user. */
  | { kind: 'user'; userId: string }
  | { kind: 'public'; companyId: string; origin: string }
  /**
   * A Calendar Selection Token. Its company sits inside `selection`, not in `companyId`, so no
   * route that asks for a company caller (requireCompany) can ever take it.
   */
  | { kind: 'calendarSelection'; selection: { companyId: string; resourceId: string; connectionId: string } }
  /**
   * A customer's manage link (modules/manage): one appointment. Its company sits inside `manage`
   * for the same reason as the selection token's: no company route can take it.
   */
  | { kind: 'manage'; manage: { companyId: string; appointmentId: string } };

export type CompanyPrincipal = Extract<Principal, { companyId: string }>;

/**
 * What a route accepts. Declared on every route as `config.access`; routes under /v3 without
 * a declaration require a company caller (machine token or dashboard user with x-api-key).
 */
export type Access =
  | { mode: 'none' }
  /** Dashboard JWT; x-api-key optional and ignored. Machine tokens get 403 with `machineMessage`. */
  | { mode: 'user'; machineMessage?: string }
  /** Machine token (its bound company) or dashboard JWT (with or without x-api-key). */
  | { mode: 'userOrMachine' }
  /**
   * A company caller. `machineMessage` set means machine tokens are refused with 403.
   * `calendarSelection`: a Calendar Selection Token is accepted too (the route checks it names
   * the path's resource and connection); everywhere else that token is 401.
   */
  | {
      mode: 'company';
      machineMessage?: string;
      roles?: Role[];
      calendarSelection?: true;
      /**
       * A machine token's credential check rides along with the route's first catalog statement
       * (credential-check.ts): set only on routes whose service settles it before any write.
       */
      deferCredentialCheck?: true;
    }
  | { mode: 'public' }
  /** A manage-link token (Authorization: Bearer) only: the /v3/manage/* routes. */
  | { mode: 'manage' };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function requireCompany(principal: Principal | null): CompanyPrincipal {
  if (!principal || !('companyId' in principal)) throw new ApiError(401, 'Authentication required');
  return principal;
}

/** A dashboard user acting in a company (routes that refuse machine tokens have one). */
export function requireDashboardUser(principal: Principal | null): Extract<Principal, { kind: 'dashboard' }> {
  if (principal?.kind !== 'dashboard') throw new ApiError(401, 'Authentication required');
  return principal;
}

export function requireUser(principal: Principal | null): { userId: string } {
  if (!principal || !('userId' in principal)) throw new ApiError(401, 'Authentication required');
  return principal;
}
