import { messages } from '../booking/messages/en.js';
import type { ErrorBody } from '../booking/problems.js';

const t = messages;

/** A refusal of the link itself: the page shows it instead of the appointment, with the next step. */
export type Refusal = 'invalid' | 'cancelled' | 'moved';

/**
 * What an API refusal of /v3/manage/* means for the customer (docs/api.md, Customer self-service):
 * 401 (forged, altered, expired, names no appointment) and 404 are a link that does not work; 410
 * is a spent link, told apart by the API's message ("…was cancelled…" or "…was moved…"). Anything
 * else is words for the step the customer is on.
 */
export function explainManage(status: number, body: ErrorBody): { refusal: Refusal } | { text: string } {
  if (status === 401 || status === 404) return { refusal: 'invalid' };
  if (status === 410) return { refusal: /\bmoved\b/i.test(body?.message ?? '') ? 'moved' : 'cancelled' };
  if (status === 403) return { text: t.manage.suspended };
  if (body?.code === 'BOOKING-105') return { text: t.slotTaken };
  if (status === 429) return { text: t.limited };
  return { text: t.generic(body?.message ?? `HTTP ${status}`) };
}
