// What a customer's messages carry for self-service: the manage link, and the calendar entry (.ics)
// of the appointment, which calendars keep as one event across reschedules.
import { createEvent } from 'ics';
import type { TokenService } from '../../platform/auth/tokens.js';
import type { Db } from '../../platform/database/index.js';
import type { EventTrigger } from '../../platform/database/schema.js';
import type { EmailAttachment } from '../../platform/messaging/email.js';
import type { Appointment } from '../appointments/mapper.js';

/** A reschedule chain is never this long; the walk stops here whatever the data says. */
const MAX_CHAIN = 1000;

/** The `<name> <address>` or bare address of EMAIL_FROM, as the calendar entry's organizer. */
export function organizerOf(emailFrom: string): { name?: string; email: string } | null {
  const match = /^\s*(?:"?([^"<]*?)"?\s*)?<([^<>\s]+@[^<>\s]+)>\s*$/.exec(emailFrom);
  if (match) return match[1] ? { name: match[1], email: match[2]! } : { email: match[2]! };
  return /^[^\s@<>]+@[^\s@<>]+$/.test(emailFrom.trim()) ? { email: emailFrom.trim() } : null;
}

/** `https://book.example.com/` + token → `https://book.example.com/manage/<token>`. */
export function manageUrlOf(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/manage/${token}`;
}

/** What a calendar entry is made of (notifications/messages.ts MessageData, in part). */
export interface CalendarEntryData {
  appointment: Appointment;
  company: { name: string };
  location: { name: string };
  service: { name: string };
  customer: { firstName: string; lastName: string | null; email: string } | null;
}

export interface CustomerLinksDeps {
  db: Db;
  tokens: Pick<TokenService, 'signManageToken'>;
  /** PUBLIC_BASE_URL; without it no manage link is sent (there is no page to open). */
  publicBaseUrl: string | undefined;
  /** EMAIL_FROM: the organizer of the calendar entries. */
  emailFrom: string;
}

export function createCustomerLinks(deps: CustomerLinksDeps) {
  const organizer = organizerOf(deps.emailFrom);

  /**
   * The first appointment of the chain this one was rescheduled from, and how many reschedules
   * led here: the entry's UID is the first one's, its SEQUENCE the count, so a calendar moves the
   * event it already has instead of adding another.
   */
  async function chainOf(appointment: Appointment): Promise<{ rootId: string; depth: number }> {
    let rootId = appointment.id;
    let previous = appointment.rescheduledFromId;
    let depth = 0;
    while (previous && depth < MAX_CHAIN) {
      const row = await deps.db
        .selectFrom('appointments')
        .select(['id', 'rescheduledFromId'])
        .where('companyId', '=', appointment.companyId)
        .where('id', '=', previous)
        .executeTakeFirst();
      if (!row) break;
      rootId = row.id;
      previous = row.rescheduledFromId;
      depth += 1;
    }
    return { rootId, depth };
  }

  return {
    /** The manage link of an appointment the customer can still act on (BK or RS), or null. */
    async manageUrl(appointment: Appointment): Promise<string | null> {
      if (!deps.publicBaseUrl || (appointment.status !== 'BK' && appointment.status !== 'RS')) return null;
      const token = await deps.tokens.signManageToken({ companyId: appointment.companyId, appointmentId: appointment.id }, new Date(appointment.endTime));
      return manageUrlOf(deps.publicBaseUrl, token);
    },

    /**
     * The .ics of a customer email: a booking or a reschedule is a REQUEST of the chain's event,
     * a cancellation its CANCEL (one SEQUENCE above the last REQUEST). Other messages carry none.
     */
    async calendarFile(trigger: EventTrigger, data: CalendarEntryData, manageUrl: string | null): Promise<EmailAttachment | null> {
      const method = trigger === 'NEW_APPOINTMENT' || trigger === 'APPOINTMENT_RESCHEDULED' ? 'REQUEST' : trigger === 'APPOINTMENT_CANCELLED' ? 'CANCEL' : null;
      if (!method) return null;
      const { appointment, customer } = data;
      const { rootId, depth } = await chainOf(appointment);
      const title = `${data.service.name} at ${data.company.name}`;
      const { error, value } = createEvent({
        productId: 'slotwise/appointments',
        method,
        uid: `${rootId}@slotwise`,
        sequence: method === 'CANCEL' ? depth + 1 : depth,
        status: method === 'CANCEL' ? 'CANCELLED' : 'CONFIRMED',
        start: Date.parse(appointment.startTime),
        startInputType: 'utc',
        startOutputType: 'utc',
        end: Date.parse(appointment.endTime),
        endInputType: 'utc',
        endOutputType: 'utc',
        title,
        location: data.location.name,
        description: manageUrl ? `${title}\nSee, reschedule or cancel: ${manageUrl}` : title,
        ...(manageUrl ? { url: manageUrl } : {}),
        ...(organizer ? { organizer: { name: organizer.name ?? data.company.name, email: organizer.email } } : {}),
        ...(customer
          ? { attendees: [{ name: [customer.firstName, customer.lastName].filter(Boolean).join(' '), email: customer.email, rsvp: false, partstat: 'ACCEPTED' as const, role: 'REQ-PARTICIPANT' as const }] }
          : {}),
      });
      // The generator refuses only malformed input (a bad date); the email still goes, without the file.
      if (error || !value) return null;
      return { filename: method === 'CANCEL' ? 'cancel.ics' : 'invite.ics', content: value, contentType: `text/calendar; charset=utf-8; method=${method}` };
    },
  };
}

export type CustomerLinks = ReturnType<typeof createCustomerLinks>;
