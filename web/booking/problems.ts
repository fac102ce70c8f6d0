import { messages as t } from './messages/en.js';

export type ErrorBody = { message?: string; code?: string } | undefined;

/** Words and a next step for an API refusal (docs/api.md, Public). */
export function explain(status: number, body: ErrorBody): string {
  if (body?.code === 'BOOKING-105') return t.slotTaken;
  if (body?.code === 'BOOKING-111') return t.holdExpired;
  if (status === 429) return t.limited;
  if (status === 401) return t.unknownClient;
  if (status === 403) return t.notAllowed;
  if (/expired|no longer held|not held/i.test(body?.message ?? '')) return t.holdExpired;
  return t.generic(body?.message ?? `HTTP ${status}`);
}
