import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The appointment cursor (specification: cursor pagination of GET /v3/appointments/cursor): an
 * opaque token, HMAC-SHA256 signed with CURSOR_SECRET, that carries the company, the filters, sort,
 * order and limit of the first request, the position reached, and when the walk expires (one hour
 * after the first page). Anything that does not verify is the one answer the specification gives:
 * "Invalid or expired appointment cursor".
 */

export const CURSOR_LIFETIME_MS = 3_600_000;

export interface CursorState<Q = Record<string, unknown>> {
  /** Company the walk belongs to. */
  c: string;
  /** Filters, sort, order and limit of the first request, exactly as validated. */
  q: Q;
  /** Position: sort value (epoch ms) and id of the last appointment returned. */
  p: [number, string];
  /** Expiry, epoch ms: one hour after the first page, carried unchanged through the walk. */
  e: number;
}

function signature(secret: string, body: string): Buffer {
  return createHmac('sha256', secret).update(`appointment-cursor.${body}`).digest();
}

export function encodeCursor<Q>(secret: string, state: CursorState<Q>): string {
  const body = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${body}.${signature(secret, body).toString('base64url')}`;
}

/**
 * The state of a cursor that is intact, unexpired and the company's; otherwise null. `Q`: the type
 * of the query the cursor was made with (the signature proves it is what encodeCursor was given).
 */
export function decodeCursor<Q = Record<string, unknown>>(secret: string, token: string, companyId: string, now: number): CursorState<Q> | null {
  const parts = token.split('.');
  if (parts.length !== 2) return null;
  const [body = '', sig = ''] = parts;
  const expected = signature(secret, body);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let state: CursorState<Q>;
  try {
    // Signed by us (checked above): the JSON is a CursorState that encodeCursor wrote.
    state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorState<Q>;
  } catch {
    return null;
  }
  if (typeof state !== 'object' || state === null || state.c !== companyId || typeof state.e !== 'number' || state.e <= now) return null;
  if (!Array.isArray(state.p) || typeof state.p[0] !== 'number' || typeof state.p[1] !== 'string') return null;
  return state;
}
