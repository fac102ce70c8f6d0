import { errorCode, fieldOf as errorField } from '../values.js';

/** PostgreSQL's foreign_key_violation, as both drivers report it. */
export function isForeignKeyViolation(error: unknown): boolean {
  return errorCode(error) === '23503';
}

/** PostgreSQL's unique_violation, as both drivers report it. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (errorCode(error) !== '23505') return false;
  const message = errorField(error, 'message');
  return constraint === undefined || errorField(error, 'constraint') === constraint || (typeof message === 'string' && message.includes(constraint));
}

/**
 * Marks an error as thrown by the database layer (the pool's connect, a client's query). Only such
 * errors can be "the database is unavailable": a client hanging up mid-request also raises
 * ECONNRESET, and that must never be answered or counted as a database outage.
 */
export const FROM_DATABASE = Symbol('slotwise.fromDatabase');

export function markFromDatabase<T>(error: T): T {
  if (error && typeof error === 'object') Reflect.set(error, FROM_DATABASE, true);
  return error;
}

/**
 * Marks an error of an exchange that carried a commit (Kysely's own, or one sent with a statement
 * marked as the last of its transaction, transaction-control.ts) when the server gave no answer:
 * the connection was lost, or the client stopped waiting. The commit may have run, so the write
 * may be saved; the answer says so instead of only "retry" (platform/errors.ts).
 */
export const COMMIT_OUTCOME_UNKNOWN = Symbol('slotwise.commitOutcomeUnknown');

export function markCommitOutcomeUnknown<T>(error: T, options: { evenWithServerAnswer?: boolean } = {}): T {
  // An ErrorResponse of the server (both drivers give it a severity) is an answer: the server
  // skipped the commit, or the commit failed. A code alone is not: EPIPE is five capitals too.
  const answered = !options.evenWithServerAnswer && typeof errorField(error, 'severity') === 'string';
  if (!answered && error && typeof error === 'object') Reflect.set(error, COMMIT_OUTCOME_UNKNOWN, true);
  return error;
}

export const isCommitOutcomeUnknown = (error: unknown): boolean => errorField(error, COMMIT_OUTCOME_UNKNOWN) === true;

/** SQLSTATEs that mean "the database cannot serve this now", not "the query is wrong". */
const UNAVAILABLE_SQLSTATE_PREFIXES = [
  '08', // connection exception
  '53', // insufficient resources: too many connections, disk full, out of memory
  '57P', // operator intervention: admin or crash shutdown, cannot connect now (starting up)
];
const UNAVAILABLE_SQLSTATES = new Set([
  '25006', // read_only_sql_transaction: a failover left us on a standby
  '57014', // query_canceled: statement_timeout, or an administrator cancelled it
]);
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// node-postgres reports these as plain Errors with no code.
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Connection ended unexpectedly',
  'Query read timeout',
];

function unavailableSignal(error: unknown): boolean {
  const code = errorCode(error);
  const message = errorField(error, 'message');
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SQLSTATE_PREFIXES.some((p) => code.startsWith(p)) || UNAVAILABLE_NODE_CODES.has(code))) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
  // Several addresses refused (AggregateError).
  const inner = errorField(error, 'errors');
  return Array.isArray(inner) && inner.some((x) => x && typeof x === 'object' && unavailableSignal(x));
}

/**
 * True when a failure of the database layer means the database is unreachable or cannot serve now
 * (down, restarting, a connection cut, a failover to a standby, no connection to be had in time, a
 * statement past its timeout). The request that met it answers 503 with Retry-After instead of a
 * 500: nothing about it was wrong, and the same request a moment later will succeed.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (errorField(error, FROM_DATABASE) !== true) return false;
  return unavailableSignal(error);
}

/** lock_not_available: a lock wait passed lock_timeout (or NOWAIT found the lock taken). */
export function isLockTimeout(error: unknown): boolean {
  return errorCode(error) === '55P03';
}

/** A deadlock or serialisation failure that outlived the transaction's retries: busy, not wrong. */
export function isContention(error: unknown): boolean {
  const code = errorCode(error);
  return code === '40P01' || code === '40001';
}
