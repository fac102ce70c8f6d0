import type { Principal } from '../../platform/auth/principal.js';
import type { TokenService } from '../../platform/auth/tokens.js';
import { ApiError, gone, notFound } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { transitionProblem } from '../../domain/booking.js';
import { appointmentRepository } from '../appointments/repository.js';
import type { AppointmentRow } from '../appointments/repository.js';
import type { AppointmentService } from '../appointments/service.js';
import type { AvailabilityService } from '../availability/service.js';
import type { ManageAvailabilitySearch, ManageRescheduleRequest, ManagedAppointment } from './schemas.js';

/**
 * The customer's self-service behind a manage link (docs/api.md, Customer self-service). The
 * token's appointment is the only one reached: every call reads it by the token's ids, and the
 * booking operations run with the `manage` principal, which sees that appointment and no other
 * (appointments/operation.ts `visible`).
 */

export const CANCELLED_MESSAGE = 'This appointment was cancelled; this link no longer opens it';
export const MOVED_MESSAGE = 'This appointment was moved to a new time; the confirmation email of the new time has its own manage link';
export const STARTED_MESSAGE = 'The appointment has already started; it can no longer be changed online';

type ManagePrincipal = Extract<Principal, { kind: 'manage' }>;

export function requireManage(principal: Principal | null): ManagePrincipal {
  if (principal?.kind !== 'manage') throw new ApiError(401, 'A manage link token is required');
  return principal;
}

/**
 * Whether the customer may cancel or reschedule now, and why not. The rules: the booking
 * lifecycle's (cancel: BK or RS; reschedule: BK), the appointment has not started, and it starts
 * at least the service's minimum notice (`bookInAdvance` minutes) from now: the notice a new booking
 * needs is the notice a change needs. Services have no separate cancellation window.
 */
export function customerChangeProblem(operation: 'cancel' | 'reschedule', row: Pick<AppointmentRow, 'status' | 'startTime' | 'expiresAt'>, noticeMinutes: number, now: number): string | null {
  const problem = transitionProblem(operation, row.status, row.expiresAt?.getTime() ?? null, now);
  if (problem) return problem.msg;
  const start = row.startTime.getTime();
  if (start <= now) return STARTED_MESSAGE;
  if (start < now + noticeMinutes * 60_000) {
    return `Changes must be made at least ${noticeMinutes} minutes before the appointment starts; please contact the business`;
  }
  return null;
}

export interface ManageDeps {
  db: Db;
  appointments: AppointmentService;
  availability: AvailabilityService;
  tokens: Pick<TokenService, 'signManageToken'>;
  now?: () => number;
}

export function createManageService(deps: ManageDeps) {
  const { db } = deps;
  const clock = deps.now ?? Date.now;

  /** The token's appointment; 410 once it was cancelled or moved (its link is spent). */
  async function live(principal: ManagePrincipal): Promise<AppointmentRow> {
    const { companyId, appointmentId } = principal.manage;
    const row = await appointmentRepository.byId(db, companyId, appointmentId);
    if (!row) throw notFound('Appointment not found');
    if (row.status === 'CN') throw gone(CANCELLED_MESSAGE);
    if (row.status === 'RE') throw gone(MOVED_MESSAGE);
    return row;
  }

  async function noticeOf(row: AppointmentRow): Promise<number> {
    const service = await db.selectFrom('services').select('bookInAdvance').where('companyId', '=', row.companyId).where('id', '=', row.serviceId).executeTakeFirst();
    return service?.bookInAdvance ?? 0;
  }

  async function view(row: AppointmentRow): Promise<ManagedAppointment> {
    const [service, location, resources] = await Promise.all([
      db.selectFrom('services').select(['id', 'name', 'bookInAdvance']).where('companyId', '=', row.companyId).where('id', '=', row.serviceId).executeTakeFirstOrThrow(),
      db.selectFrom('locations').select(['id', 'name', 'timezoneName']).where('companyId', '=', row.companyId).where('id', '=', row.locationId).executeTakeFirstOrThrow(),
      row.resourceIds.length
        ? db.selectFrom('resources').select(['id', 'name']).where('companyId', '=', row.companyId).where('id', 'in', row.resourceIds).orderBy('name').orderBy('id').execute()
        : Promise.resolve([]),
    ]);
    const now = clock();
    const allowed = (operation: 'cancel' | 'reschedule') => {
      const reason = customerChangeProblem(operation, row, service.bookInAdvance, now);
      return { allowed: reason === null, reason };
    };
    return {
      id: row.id,
      status: row.status,
      startTime: row.startTime.toISOString(),
      endTime: row.endTime.toISOString(),
      duration: row.duration,
      timezoneName: row.timezoneName,
      service: { id: service.id, name: service.name },
      location: { id: location.id, name: location.name, timezoneName: location.timezoneName },
      resources: resources.map((r) => ({ id: r.id, name: r.name })),
      cancel: allowed('cancel'),
      reschedule: allowed('reschedule'),
    };
  }

  /** The appointment, refused with 400 and the reason when the customer may not make this change now. */
  async function changeable(principal: ManagePrincipal, operation: 'cancel' | 'reschedule'): Promise<AppointmentRow> {
    const row = await live(principal);
    const reason = customerChangeProblem(operation, row, await noticeOf(row), clock());
    if (reason) throw new ApiError(400, reason);
    return row;
  }

  return {
    async get(principal: ManagePrincipal): Promise<ManagedAppointment> {
      return view(await live(principal));
    },

    /** BK or RS → CN through the booking lifecycle (APPOINTMENT_CANCELLED, and its email). */
    async cancel(principal: ManagePrincipal): Promise<ManagedAppointment> {
      const row = await changeable(principal, 'cancel');
      await deps.appointments.cancel(row.companyId, principal, row.id);
      const cancelled = await appointmentRepository.byId(db, row.companyId, row.id);
      return view(cancelled!);
    },

    /**
     * BK → RE plus a new BK, with every rule of the authenticated reschedule (the slot, lead time,
     * limits); the appointment keeps its resources unless the body names others, and its overrides.
     */
    async reschedule(principal: ManagePrincipal, body: ManageRescheduleRequest): Promise<{ appointment: ManagedAppointment; manageToken: string }> {
      const row = await changeable(principal, 'reschedule');
      const replacement = await deps.appointments.reschedule(row.companyId, principal, row.id, body);
      const replaced = (await appointmentRepository.byId(db, row.companyId, replacement.id))!;
      const manageToken = await deps.tokens.signManageToken({ companyId: replaced.companyId, appointmentId: replaced.id }, replaced.endTime);
      return { appointment: await view(replaced), manageToken };
    },

    /** The slot picker: open times of the appointment's service at its location (no customer limits applied). */
    async availability(principal: ManagePrincipal, search: ManageAvailabilitySearch & { ResourceIds?: string[] | undefined }): Promise<string> {
      const row = await live(principal);
      return deps.availability.searchJson(row.companyId, null, { ...search, LocationId: row.locationId, ServiceId: row.serviceId });
    },
  };
}

export type ManageService = ReturnType<typeof createManageService>;
