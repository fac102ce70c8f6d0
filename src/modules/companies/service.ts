import { randomUUID } from 'node:crypto';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { fieldError, notFound, validationErrors } from '../../platform/errors.js';
import { bookingPageProblems } from '../../domain/booking-page.js';
import type { BookingPageSettings } from '../../domain/booking-page.js';
import type { Principal } from '../../platform/auth/principal.js';
import { pageOf, pageWindow } from '../catalog/graph.js';
import { normaliseAllowedDomains } from './allowed-domains.js';
import type { CompanyRepository, CompanyRow } from './repository.js';
import type { CompanyCreate, CompanyUpdate } from './schemas.js';

/** Roles that may see credential material (the API key prefix) in company responses. */
function seesCredentials(principal: Principal | null): boolean {
  if (!principal) return false;
  if (principal.kind === 'machine') return true;
  return principal.kind === 'dashboard' && (principal.role === 'Owner' || principal.role === 'Admin');
}

export function companyView(row: CompanyRow, principal: Principal | null) {
  const view = {
    id: row.id,
    name: row.name,
    publicClientId: row.publicClientId,
    allowedDomains: row.allowedDomains,
    disableEmailNotifications: row.disableEmailNotifications,
    disableSmsNotifications: row.disableSmsNotifications,
    // Legacy (v1) value: true only when both channels are off.
    disableEmailAndSmsNotifications: row.disableEmailNotifications && row.disableSmsNotifications,
    suspended: row.suspendedAt !== null,
    reminderOffsets: row.reminderOffsets,
    bookingPage: bookingPageView(row.bookingPage),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  return seesCredentials(principal) ? { ...view, apiKeyPrefix: row.apiKeyPrefix } : view;
}

/** The channel flags a write body sets, with the deprecated `disableNotifications` rule applied. */
export function channelFlags(input: CompanyUpdate): { disableEmailNotifications?: boolean; disableSmsNotifications?: boolean } {
  const flags: { disableEmailNotifications?: boolean; disableSmsNotifications?: boolean } = {};
  if (input.disableEmailNotifications !== undefined) flags.disableEmailNotifications = input.disableEmailNotifications;
  if (input.disableSmsNotifications !== undefined) flags.disableSmsNotifications = input.disableSmsNotifications;
  if (input.disableNotifications !== undefined && Object.keys(flags).length === 0) {
    flags.disableEmailNotifications = input.disableNotifications;
    flags.disableSmsNotifications = input.disableNotifications;
  }
  return flags;
}

/** Every key present, null when unset, so a page never has to guess. */
export function bookingPageView(settings: BookingPageSettings) {
  return { brandColor: settings.brandColor ?? null, logoUrl: settings.logoUrl ?? null, currency: settings.currency ?? null, fields: settings.fields ?? [] };
}

function bookingPageOrThrow(settings: BookingPageSettings): string {
  const problems = bookingPageProblems(settings);
  if (problems.length > 0) throw validationErrors(problems.map((p) => fieldError('body', p.path, p.message)));
  return JSON.stringify(bookingPageView(settings));
}

function newApiKey() {
  const apiKey = randomToken('swk');
  return { apiKey, apiKeyHash: sha256(apiKey), apiKeyPrefix: apiKey.slice(0, 12) };
}

function allowedDomainsOrThrow(values: string[]): string[] {
  const { domains, errors } = normaliseAllowedDomains(values);
  if (errors.length > 0) throw validationErrors(errors);
  return domains;
}

export function createCompanyService({
  repository,
}: {
  repository: Pick<CompanyRepository, 'insertWithOwner' | 'byId' | 'page' | 'update' | 'locationsOf' | 'all'>;
}) {
  async function load(companyId: string) {
    const row = await repository.byId(companyId);
    if (!row) throw notFound('Company not found');
    return row;
  }

  return {
    async create(ownerUserId: string, input: CompanyCreate) {
      const { apiKey, apiKeyHash, apiKeyPrefix } = newApiKey();
      const flags = channelFlags(input);
      const row = await repository.insertWithOwner(
        {
          id: randomUUID(),
          name: input.name,
          apiKeyHash,
          apiKeyPrefix,
          publicClientId: randomToken('pub', 16),
          allowedDomains: allowedDomainsOrThrow(input.allowedDomains ?? []),
          disableEmailNotifications: flags.disableEmailNotifications ?? false,
          disableSmsNotifications: flags.disableSmsNotifications ?? false,
          reminderOffsets: [...(input.reminderOffsets ?? [])].sort((a, b) => b - a),
          bookingPage: bookingPageOrThrow(input.bookingPage ?? {}),
        },
        ownerUserId,
      );
      // The only time the API key is shown: only its hash is kept.
      return { ...companyView(row, null), apiKeyPrefix, apiKey };
    },

    async list(principal: Principal, query: { limit: number; page: number; search?: string | undefined; include?: Set<string> }) {
      const filter =
        principal.kind === 'machine'
          ? { onlyCompanyId: principal.companyId, search: query.search }
          : principal.kind === 'user' || principal.kind === 'dashboard'
            ? { userId: principal.userId, search: query.search }
            : { onlyCompanyId: principal.kind === 'public' ? principal.companyId : principal.kind === 'manage' ? principal.manage.companyId : principal.selection.companyId, search: query.search };
      const { rows, total } = await repository.page(filter, pageWindow(query));
      const locations = query.include?.has('locations') ? await repository.locationsOf(rows.map((row) => row.id)) : undefined;
      const data = rows.map((row) => ({
        ...companyView(row, principal),
        ...(locations
          ? { locations: locations.filter((l) => l.companyId === row.id).map(({ id, name, timezoneName }) => ({ id, name, timezoneName })) }
          : {}),
      }));
      return pageOf(data, query.page, query.limit, total);
    },

    async read(principal: Principal & { companyId: string }) {
      return companyView(await load(principal.companyId), principal);
    },

    async update(principal: Principal & { companyId: string }, input: CompanyUpdate) {
      const changes: Parameters<CompanyRepository['update']>[1] = { ...channelFlags(input) };
      if (input.name !== undefined) changes.name = input.name;
      if (input.allowedDomains !== undefined) changes.allowedDomains = allowedDomainsOrThrow(input.allowedDomains);
      if (input.reminderOffsets !== undefined) changes.reminderOffsets = [...input.reminderOffsets].sort((a, b) => b - a);
      if (input.bookingPage !== undefined) changes.bookingPage = bookingPageOrThrow(input.bookingPage);
      const row = await repository.update(principal.companyId, changes);
      if (!row) throw notFound('Company not found');
      return companyView(row, principal);
    },

    /** Issues a new API key; the old one stops working at once. */
    async rotateApiKey(principal: Principal & { companyId: string }) {
      const { apiKey, apiKeyHash, apiKeyPrefix } = newApiKey();
      const row = await repository.update(principal.companyId, { apiKeyHash, apiKeyPrefix });
      if (!row) throw notFound('Company not found');
      return { ...companyView(row, principal), apiKey };
    },

    /** Issues a new public client id; pages still sending the old one get 401 Invalid Client ID. */
    async rotatePublicClientId(principal: Principal & { companyId: string }) {
      const row = await repository.update(principal.companyId, { publicClientId: randomToken('pub', 16) });
      if (!row) throw notFound('Company not found');
      return companyView(row, principal);
    },

    /** Operator actions (the admin CLI). */
    async setSuspended(companyId: string, suspended: boolean) {
      const row = await repository.update(companyId, { suspendedAt: suspended ? new Date() : null });
      if (!row) throw notFound('Company not found');
      return companyView(row, null);
    },

    async all() {
      return (await repository.all()).map((row) => companyView(row, null));
    },
  };
}

export type CompanyService = ReturnType<typeof createCompanyService>;
