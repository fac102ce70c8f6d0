import { sql } from 'kysely';
import { ApiError, forbidden, unauthorized } from '../errors.js';
import type { Access, Principal } from './principal.js';

/**
 * A machine token is checked against the database on every request: its client credentials must
 * still exist and not be revoked, and its company must not be suspended. That read was a statement
 * of its own, one exchange with the database before the route's own (issue 18). On the routes that
 * users wait on most (availability search, create, hold, book, reserve, the appointment list and
 * the cursor walk), the check
 * rides along with the route's first catalog statement instead: the statement carries one more
 * column (machineContextColumn), and the service settles the check with it before any write and
 * before any answer goes out (settleCredentialCheck).
 *
 * What keeps this as strict as a check of its own:
 * - The route opts in (Access `deferCredentialCheck`), and only after the token's scope and the
 *   route's access rules passed, so a read token writing is still 403 for its scope.
 * - Every answer waits for the check: when the request ends before its statement settled it (a 400
 *   from the schema, an unknown id, a stored Idempotency-Key answer), the authentication hook's
 *   onSend reads the credential then, and a bad one replaces the answer with its 401 or 403. The
 *   caller sees what the check of its own gave, in the same order, without the rate-limit headers
 *   of the company's budgets, which get back what the refused request spent.
 * - Reads of the request's own ids may come before the settling statement (a stored
 *   Idempotency-Key answer, the appointment a transition names); their results never reach a
 *   refused caller. The list page, its count and the cursor page guard their scans with the check
 *   (machineCredentialGood), so a refused caller costs no page.
 * - Nothing is written before it: the services call assertCredentialChecked before their first
 *   write, so a path that skipped the settling statement fails loudly in the tests instead.
 */
/** The route config of a route whose service settles the check (a company route, as by default). */
export const DEFERRED_CREDENTIAL_CHECK: { access: Access } = { access: { mode: 'company', deferCredentialCheck: true } };

export interface CredentialCheck {
  /**
   * `checking`: the onSend hook is reading it, after the route did not. `failed`: the credential or
   * company was refused (the answer is that 401 or 403; the rate limits give back what the request
   * spent of the company's budgets, rate-limit/index.ts).
   */
  state: 'pending' | 'checking' | 'passed' | 'failed';
}

/** What the check reads: the company (null when it does not exist) and the credential (id null when it does not). */
export interface MachineContext {
  suspendedAt: Date | string | null;
  revokedAt: Date | string | null;
  credentialId: string | null;
}

export const SUSPENDED_MESSAGE = 'Company account is suspended';
export const REVOKED_CREDENTIALS_MESSAGE = 'The client credentials of this token have been revoked';

/** The rules of a machine token's credential: 401 unknown or revoked, 403 company suspended. */
export function assertMachineContext(context: MachineContext | null | undefined): void {
  if (!context || !context.credentialId) throw unauthorized('Invalid or expired token');
  if (context.revokedAt) throw unauthorized(REVOKED_CREDENTIALS_MESSAGE);
  if (context.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);
}

/** The client id whose check a statement should carry, when this caller's check is still pending. */
export function pendingCredentialCheck(principal: Principal | null): string | null {
  return principal?.kind === 'machine' && principal.credentialCheck?.state === 'pending' ? principal.clientId : null;
}

/**
 * Settles a pending check with the context a statement read (its machineContextColumn): throws the
 * 401 or 403 the authentication hook would have, else marks it passed.
 */
export function settleCredentialCheck(principal: Principal | null, context: MachineContext | null | undefined): void {
  if (principal?.kind !== 'machine' || principal.credentialCheck?.state !== 'pending') return;
  try {
    assertMachineContext(context);
  } catch (error) {
    principal.credentialCheck.state = 'failed';
    throw error;
  }
  principal.credentialCheck.state = 'passed';
}

/** Before a write: a machine caller's credential has been checked and passed (anything else is a bug, never a write). */
export function assertCredentialChecked(principal: Principal): void {
  if (principal.kind === 'machine' && principal.credentialCheck && principal.credentialCheck.state !== 'passed') {
    throw new ApiError(500, 'Internal Server Error: a write was attempted before the caller\'s credentials were checked');
  }
}

/**
 * True when the credential and company are good, as a condition with no column of the statement's
 * own: PostgreSQL evaluates it once, before the scan it guards, so a refused caller's statement
 * reads no rows (the cursor page builds no page for it).
 */
export function machineCredentialGood(companyId: unknown, clientId: unknown) {
  return sql<boolean>`coalesce((select mc.suspended_at is null and mcc.revoked_at is null
    from companies as mc join client_credentials as mcc on mcc.company_id = mc.id and mcc.client_id = ${clientId} where mc.id = ${companyId}), false)`;
}

/**
 * The column a statement adds to carry the check: the company and the credential of `clientId`,
 * as json (null when the company does not exist). Both tables filtered by the company.
 */
export function machineContextColumn(companyId: unknown, clientId: unknown) {
  return sql<MachineContext | null>`(select json_build_object('suspendedAt', mc.suspended_at, 'revokedAt', mcc.revoked_at, 'credentialId', mcc.id)
    from companies as mc left join client_credentials as mcc on mcc.company_id = mc.id and mcc.client_id = ${clientId} where mc.id = ${companyId})`;
}
