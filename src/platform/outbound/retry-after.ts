import { DateTime } from 'luxon';

/**
 * Milliseconds to wait from a Retry-After header (RFC 9110 10.2.3: delay-seconds or an
 * HTTP-date), or null when it is absent or unreadable. Every outbound client reads it here.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = DateTime.fromHTTP(trimmed);
  return date.isValid ? Math.max(0, date.toMillis() - now) : null;
}
