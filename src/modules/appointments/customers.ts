import { randomUUID } from 'node:crypto';
import { badRequest, validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { appointmentRepository as repo } from './repository.js';
import type { BookRequest } from './schemas.js';

/** The customer of a booking: by CustomerId, or found by email in the company, or created. */

function splitName(name: string): { firstName: string; lastName: string | null } {
  const trimmed = name.trim();
  const space = trimmed.indexOf(' ');
  return space < 0 ? { firstName: trimmed, lastName: null } : { firstName: trimmed.slice(0, space), lastName: trimmed.slice(space + 1).trim() || null };
}

/**
 * The customer of a new booking: CustomerId, else found or created from name and email.
 * `required`: without either, BOOKING-135 (a hold may wait for its customer; a booking may not).
 */
export async function resolveCustomer(trx: Db, companyId: string, body: BookRequest, required: boolean): Promise<string | null> {
  if (body.CustomerId) return body.CustomerId;
  if (body.email || body.name) {
    if (!body.email) throw validationError('body', 'email', 'email is required when CustomerId is not given', 'BOOKING-109');
    if (!body.name?.trim()) throw validationError('body', 'name', 'name is required when CustomerId is not given', 'BOOKING-110');
    return repo.findOrCreateCustomer(trx, companyId, { id: randomUUID(), ...splitName(body.name), email: body.email, phone: body.phone ?? null });
  }
  if (required) throw badRequest('Either CustomerId, or name and email, must be supplied', 'BOOKING-135');
  return null;
}

/** Whether a live customer of the company has this email (case-insensitive). */
export async function customerExists(db: Db, companyId: string, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('customers')
    .select('id')
    .where('companyId', '=', companyId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .where('archivedAt', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}
