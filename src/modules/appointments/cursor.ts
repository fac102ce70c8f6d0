import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The appointment cursor (specification: cursor pagination of GET /v3/appointments/cursor): an
 * opaque token, HMAC-SHA256 signed with CURSOR_SECRET, that carries the company, the filters, sort,
 * order and limit of the first request, the position reached, and when the walk expires (one hour
 * after the first page). Anything that does not verify is the one answer the specification gives:
 * "Invalid or expired appointment cursor".
 */

export const CURSOR_LIFETIME_MS = 3_600_000;

export interface CursorState {
  /** Company the walk belongs to. */
  c: string;
  /** Filters, sort, order and limit of the first request, exactly as validated. */
  q: Record<string, unknown>;
  /** Position: sort value (epoch ms) and id of the last appointment returned. */
  p: [number, string];
  /** Expiry, epoch ms: one hour after the first page, carried unchanged through the walk. */
  e: number;
}

function signature(secret: string, body: string): Buffer {
  return createHmac('sha256', secret).update(`appointment-cursor.${body}`).digest();
}

export function encodeCursor(secret: string, state: CursorState): string {
  const body = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${body}.${signature(secret, body).toString('base64url')}`;
}

/** The state of a cursor that is intact, unexpired and the company's; otherwise null. */
export function decodeCursor(secret: string, token: string, companyId: string, now: number): CursorState | null {
  const parts = token.split('.');
  if (parts.length !== 2) return null;
  const [body, sig] = parts as [string, string];
  const expected = signature(secret, body);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let state: CursorState;
  try {
    state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorState;
  } catch {
    return null;
  }
  if (typeof state !== 'object' || state === null || state.c !== companyId || typeof state.e !== 'number' || state.e <= now) return null;
  if (!Array.isArray(state.p) || typeof state.p[0] !== 'number' || typeof state.p[1] !== 'string') return null;
  return state;
}
