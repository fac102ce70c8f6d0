import type { Principal } from '../../platform/auth/principal.js';
import { pendingCredentialCheck, settleCredentialCheck } from '../../platform/auth/credential-check.js';
import type { Db } from '../../platform/database/index.js';
import { ApiError, badRequest, fieldError, validationError } from '../../platform/errors.js';
import type { ErrorLocation } from '../../platform/errors.js';
import { assertOwned } from '../catalog/ownership.js';
import type { IdReference } from '../catalog/ownership.js';
import { locationScope } from '../catalog/scope.js';
import type { AvailabilityRepository } from './repository.js';

/**
 * What a search and a booking are about, and the checks both make of it: the records are the
 * company's, the caller may see the location, a public page sees only services shown online, the
 * service is offered at the location, and named resources are linked to both. The availability
 * search (service.ts) and booking (appointments/slot.ts) call these same functions.
 */

/** The read loadTarget makes. */
export type TargetReads = Pick<AvailabilityRepository, 'target'>;

export type LocationRow = NonNullable<Awaited<ReturnType<AvailabilityRepository['location']>>>;
export type ServiceRow = NonNullable<Awaited<ReturnType<AvailabilityRepository['service']>>>;
export type ResourceRow = Awaited<ReturnType<AvailabilityRepository['bookableResources']>>[number];

/** A validated search (or booking): what it is about, and the dates it covers in the location's zone. */
export interface PreparedSearch {
  location: LocationRow;
  service: ServiceRow;
  resources: ResourceRow[];
  zone: string;
  endDate: string;
  duration: number;
}

export interface TargetRequest {
  LocationId: string;
  ServiceId: string;
  ResourceIds: string[];
  CustomerId?: string | null | undefined;
  /** Where the caller sent ResourceIds and CustomerId. */
  location: ErrorLocation;
  /** Where the caller sent CustomerId, when not where ResourceIds came (create and hold accept it in the query too). */
  customerIdLocation?: ErrorLocation;
  /** The answer when the location or service is gone, for ids the caller did not send (a stored appointment's). */
  missing?: () => Error;
  /** A booking's slot: the named resources' committed busy time it reaches is read along (TargetIds.slot). */
  slot?: { start: Date; end: Date; now: Date } | undefined;
  /**
   * The target statement's answer, already read for these ids (a stored appointment's, read in one
   * exchange with its row: appointments/slot.ts, readStoredWithTarget); its credential check, if it
   * carried one, is settled here as if it had been read now.
   */
  found?: FoundTarget | undefined;
}

/** A target statement's answer read ahead, with the ids it was read for: it serves only a request naming the same, and no slot. */
export interface FoundTarget {
  answer: TargetAnswer;
  resourceIds: string[];
  customerId: string | null;
}

/** Whether a target answer read ahead was read for this request (same named resources and customer, no slot's busy time). */
function foundFor(target: TargetRequest): TargetAnswer | false {
  const { found } = target;
  if (!found || target.slot !== undefined || found.customerId !== (target.CustomerId ?? null)) return false;
  if (found.resourceIds.length !== target.ResourceIds.length || found.resourceIds.some((id, i) => id !== target.ResourceIds[i])) return false;
  return found.answer;
}

/** What the target statement answers (undefined: the service is not a live record). */
export type TargetAnswer = Awaited<ReturnType<AvailabilityRepository['target']>>;

/**
 * The records a search or a booking is about, read in one statement (the repository's `target`):
 * the location, the service, whether the service is offered there, and the resources bookable for
 * both. Ids that are not live records of the company are a 400 naming each (assertOwned's answer);
 * assertOwned runs only when that statement found one missing, so a valid request takes one pool
 * connection for one statement. A machine caller's pending credential check rides along with it and
 * is settled first (platform/auth/credential-check.ts): a bad credential is its 401 or 403 before any
 * 400 about the ids.
 */
export async function loadTarget(db: Db, repository: TargetReads, companyId: string, target: TargetRequest, principal: Principal | null) {
  const others: IdReference[] = [
    { table: 'resources', ids: target.ResourceIds, location: target.location, path: 'ResourceIds' },
    ...(target.CustomerId ? [{ table: 'customers' as const, ids: [target.CustomerId], location: target.customerIdLocation ?? target.location, path: 'CustomerId', single: true }] : []),
  ];
  const ahead = foundFor(target);
  const found = ahead !== false
    ? ahead
    : await repository.target(companyId, {
        locationId: target.LocationId,
        serviceId: target.ServiceId,
        resourceIds: target.ResourceIds,
        customerId: target.CustomerId ?? null,
        slot: target.slot,
      }, pendingCredentialCheck(principal));
  // No row (the service is not a live record): the check stays pending, for the onSend hook.
  if (found) settleCredentialCheck(principal, found.machineContext);
  if (!found?.location) {
    if (target.missing) throw target.missing();
    await assertOwned(db, companyId, [
      { table: 'locations', ids: [target.LocationId], location: 'query', path: 'LocationId', single: true },
      { table: 'services', ids: [target.ServiceId], location: 'query', path: 'ServiceId', single: true },
      ...others,
    ]);
    // Archived between the two reads.
    throw badRequest('Unknown location or service');
  }
  const { location, service, offered, bookable } = found;
  const liveResources = new Set(found.liveResourceIds);
  if (target.ResourceIds.some((id) => !liveResources.has(id)) || found.liveCustomer === false) {
    // Throws the 400 naming each id; passes only when the records came back since the read.
    await assertOwned(db, companyId, others);
  }
  return { location, service, offered, bookable, committedBusy: found.committedBusy };
}

/**
 * Who may search or book here: the caller's location scope (403), a public booking page only a
 * service shown online (which it sees exactly as an unknown id), and, when `requireOffered`, the
 * service offered at the location (SERVICE-122). `principal` null: no scope to apply. `named`: the
 * location id the scope is compared with and the service id a refusal names, as the caller has them.
 */
export function assertTargetOpen(
  target: { location: LocationRow; service: ServiceRow; offered: boolean },
  access: { principal: Principal | null; named: { locationId: string; serviceId: string }; onlineOnly: boolean; requireOffered: boolean },
): void {
  const scope = access.principal ? locationScope(access.principal) : null;
  if (scope && !scope.has(access.named.locationId)) throw new ApiError(403, 'This location is outside your location access');
  if (access.onlineOnly && !target.service.showOnline) {
    const msg = `${access.named.serviceId} is not a service of this company`;
    throw new ApiError(400, msg, [fieldError('query', 'ServiceId', msg)]);
  }
  if (access.requireOffered && !target.offered) throw serviceNotOfferedError(target.service.id, target.location.id);
}

/**
 * The bookable resources the caller named, in the order they are bookable; every named one must be
 * linked to the location and the service (AVAILABILITY-103, -104 at `ResourceIds.<index>`).
 */
export async function namedResources(
  db: Db,
  companyId: string,
  target: { location: LocationRow; service: ServiceRow; bookable: ResourceRow[] },
  named: string[],
  location: ErrorLocation,
): Promise<ResourceRow[]> {
  const linked = new Set(target.bookable.map((r) => r.id));
  const index = named.findIndex((id) => !linked.has(id));
  if (index >= 0) {
    const ids = { locationId: target.location.id, serviceId: target.service.id, resourceId: named[index]! };
    throw await unlinkedResourceError(db, companyId, ids, location, `ResourceIds.${index}`);
  }
  return target.bookable.filter((r) => named.includes(r.id));
}

/**
 * A named resource that cannot serve this search: AVAILABILITY-103 when it does not work at the
 * location, AVAILABILITY-104 when it works there but does not provide the service.
 */
export async function unlinkedResourceError(db: Db, companyId: string, ids: { locationId: string; serviceId: string; resourceId: string }, location: ErrorLocation, path: string) {
  const atLocation = await db
    .selectFrom('resourceLocations')
    .select('resourceId')
    .where('companyId', '=', companyId)
    .where('resourceId', '=', ids.resourceId)
    .where('locationId', '=', ids.locationId)
    .executeTakeFirst();
  return atLocation
    ? validationError(location, path, `Resource ${ids.resourceId} does not provide service ${ids.serviceId}`, 'AVAILABILITY-104')
    : validationError(location, path, `Resource ${ids.resourceId} does not work at location ${ids.locationId}`, 'AVAILABILITY-103');
}

/** SERVICE-122: the service is not offered at the location. */
function serviceNotOfferedError(serviceId: string, locationId: string) {
  return validationError('query', 'ServiceId', `Service ${serviceId} is not offered at location ${locationId}`, 'SERVICE-122');
}
