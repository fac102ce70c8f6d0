/**
 * The one shape every capability has: app.ts builds the platform parts and the repositories once
 * (AppParts), then lists the modules; each module's `register` receives the parts it declares
 * (a `Pick<AppParts, ...>`), builds its services from them and registers its routes.
 * docs/architecture.md walks through one module and says how to add another.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from '../platform/config.js';
import type { Db } from '../platform/database/index.js';
import type { Secrets } from '../platform/secrets.js';
import type { TokenService } from '../platform/auth/tokens.js';
import type { PasswordHasher } from '../platform/auth/passwords.js';
import type { EmailSender } from '../platform/messaging/email.js';
import type { SmsSender } from '../platform/messaging/sms.js';
import type { Metrics } from '../platform/metrics.js';
import type { App } from '../platform/http/types.js';
import type { AvailabilityCache } from './availability/cache.js';
import { createCompanyRepository } from './companies/repository.js';
import { createIdentityRepository } from './identity/repository.js';
import { createClientCredentialRepository } from './client-credentials/repository.js';
import { createPublicRepository } from './public/repository.js';
import { createCatalogLinks } from './catalog/links.js';
import { createLocationRepository } from './locations/repository.js';
import { createServiceRepository } from './services/repository.js';
import { createResourceRepository } from './resources/repository.js';
import { createCustomerRepository } from './customers/repository.js';
import { createUserRepository } from './users/repository.js';
import { createUnavailabilityRepository } from './unavailability/repository.js';
import { createAvailabilityRepository } from './availability/repository.js';
import { createTemplateRepository } from './templates/repository.js';
import { createWebhookRepository } from './webhooks/repository.js';
import { createNotificationRepository } from './notifications/repository.js';
import { createExternalCalendarRepository } from './external-calendars/repository.js';
import { createMigrationRepository } from './migration/repository.js';
import type { ExternalCalendarEngine } from './external-calendars/engine.js';

/** Every repository, built once over the application's database handle. */
export function createRepositories(db: Db) {
  return {
    companies: createCompanyRepository(db),
    identity: createIdentityRepository(db),
    clientCredentials: createClientCredentialRepository(db),
    publicCatalog: createPublicRepository(db),
    catalogLinks: createCatalogLinks(db),
    locations: createLocationRepository(db),
    services: createServiceRepository(db),
    resources: createResourceRepository(db),
    customers: createCustomerRepository(db),
    users: createUserRepository(db),
    unavailability: createUnavailabilityRepository(db),
    availability: createAvailabilityRepository(db),
    templates: createTemplateRepository(db),
    webhooks: createWebhookRepository(db),
    notifications: createNotificationRepository(db),
    externalCalendars: createExternalCalendarRepository(db),
    migration: createMigrationRepository(db),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;

/** What app.ts builds once and hands to every module. */
export interface AppParts {
  config: AppConfig;
  /** The application's database handle; writes open transactions on it (platform/database/transaction.ts). */
  db: Db;
  secrets: Secrets;
  log: FastifyBaseLogger;
  tokens: TokenService;
  passwords: PasswordHasher;
  email: EmailSender;
  sms: SmsSender;
  metrics: Metrics;
  repositories: Repositories;
  availabilityCache: AvailabilityCache;
  /** Bumps the availability cache versions of what a write touched (see availability/cache.ts). */
  touch: AvailabilityCache['touch'];
  /** Provider clients, credential sessions, sync, write-back and the calendar worker (modules/external-calendars/engine.ts). */
  externalCalendars: ExternalCalendarEngine;
  /** The company's id and name, for the nested `company` object of catalog answers. */
  companySummary: (companyId: string) => Promise<{ id: string; name: string }>;
  /** True once shutdown has begun (server.ts): /readyz then fails. */
  isDraining: () => boolean;
}

/**
 * A capability. `register` may take any `Pick` of AppParts: a function taking fewer parts is
 * assignable to one taking all of them, so app.ts lists modules of different needs in one array
 * while each module's signature says exactly what it uses.
 */
export interface AppModule {
  readonly name: string;
  register(app: App, parts: AppParts): void;
}
