import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Uuid } from '../../platform/http/schemas.js';

const V1Id = (what: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `A v1 ${what} id` }));

export const MappingQuery = Type.Object(
  {
    locationId: V1Id('location'),
    serviceId: V1Id('service'),
    resourceId: V1Id('resource'),
    customerId: V1Id('customer'),
    appointmentId: V1Id('appointment'),
    allocationId: V1Id('allocation (service or resource allocation)'),
  },
  { additionalProperties: false },
);
export type MappingQuery = Static<typeof MappingQuery>;

const MaybeUuid = Type.Union([Uuid(), Type.Null()]);

/** Only the keys asked are present: scalars a v3 id or null, allocationId always an array. */
export const MappingAnswer = Type.Object({
  locationId: Type.Optional(MaybeUuid),
  serviceId: Type.Optional(MaybeUuid),
  resourceId: Type.Optional(MaybeUuid),
  customerId: Type.Optional(MaybeUuid),
  appointmentId: Type.Optional(MaybeUuid),
  allocationId: Type.Optional(Type.Array(Uuid(), { description: 'Weekly and single allocations made from the v1 allocation' })),
});

// --- POST /v3/migration/sync and GET /v3/migration/jobs/:id ------------------------------------

const V1List = (what: string) => Type.Optional(Type.Array(Type.Unknown(), { description: `v1 ${what} records, as the v1 API answers them (shared/spec/v1-source.md)` }));

export const ApiSourceBody = Type.Object(
  {
    type: Type.Literal('api'),
    baseUrl: Type.String({ format: 'uri', maxLength: 2048, description: 'The v1 API, for example https://api.onsched.com (https, public address)' }),
    tokenUrl: Type.String({ format: 'uri', maxLength: 2048, description: 'The v1 identity server token endpoint (https, public address)' }),
    clientId: Type.String({ minLength: 1, maxLength: 500 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 2000, description: 'Kept encrypted while the job runs, deleted when it ends, never returned' }),
  },
  { additionalProperties: false, description: 'Read a live v1 company (OAuth client credentials, scope OnSchedApi)' },
);

export const ExportSourceBody = Type.Object(
  {
    type: Type.Literal('export'),
    data: Type.Object(
      {
        locations: V1List('location'),
        services: V1List('service'),
        resources: V1List('resource'),
        serviceAllocations: V1List('service allocation'),
        resourceAllocations: V1List('resource allocation'),
        resourceBlocks: V1List('resource block'),
        customers: V1List('customer'),
        appointments: V1List('appointment'),
      },
      { additionalProperties: false, description: 'A v1 export document (decisions.md "Migration")' },
    ),
  },
  { additionalProperties: false },
);

export const MigrationSyncBody = Type.Object(
  {
    source: Type.Union([ApiSourceBody, ExportSourceBody], { description: 'Where the v1 data comes from' }),
    dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Report what would happen; write nothing' })),
  },
  { additionalProperties: false },
);
export type MigrationSyncBody = Static<typeof MigrationSyncBody>;

export const MigrationPreferHeader = Type.Object({
  prefer: Type.Optional(Type.String({ maxLength: 200, description: '`respond-async` answers 202 with a job even for a small import' })),
});

const KINDS = ['locations', 'services', 'resources', 'weeklyAllocations', 'singleAllocations', 'recurringBlocks', 'customers', 'appointments'] as const;
const Counts = (description: string) => Type.Object(Object.fromEntries(KINDS.map((kind) => [kind, Type.Integer({ minimum: 0 })])), { description });
const Note = Type.Object({
  kind: Type.Union(KINDS.map((kind) => Type.Literal(kind))),
  legacyId: Type.Union([Type.String(), Type.Null()], { description: 'The v1 id (null when the record has none that can be read)' }),
  message: Type.String(),
});

export const MigrationReport = Type.Object(
  {
    dryRun: Type.Boolean(),
    created: Counts('Records created by this run (a dry run: that would be created). Allocations count v3 rows (one per weekday or date).'),
    skipped: Counts('Records the company already had (same legacyId, or for customers the same email)'),
    failed: Type.Array(Note, { description: 'Records that did not migrate, each with the reason' }),
    ignored: Counts('Records left behind on purpose: deleted in v1, ended allocations, past appointments, v1 holds'),
    warnings: Type.Array(Note, { description: 'Records that migrated with something dropped or changed (at most 1000)' }),
    warningsOmitted: Type.Integer({ minimum: 0, description: 'Warnings beyond the first 1000' }),
  },
  { $id: 'MigrationReport' },
);

const KindProgress = Type.Object({
  total: Type.Integer({ minimum: 0 }),
  processed: Type.Integer({ minimum: 0 }),
  created: Type.Integer({ minimum: 0 }),
  skipped: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
});

export const MigrationJob = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed')]),
    dryRun: Type.Boolean(),
    sourceType: Type.Union([Type.Literal('api'), Type.Literal('export')]),
    progress: Type.Object(Object.fromEntries(KINDS.map((kind) => [kind, KindProgress])), { description: 'Per kind: records in the plan, processed so far, and the counts of the report so far' }),
    report: Type.Union([MigrationReport, Type.Null()], { description: 'The final report; null while running' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why a failed job stopped' }),
    attempts: Type.Integer({ minimum: 1, description: 'Instances that started the run (more than 1: resumed after a stop)' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'MigrationJob' },
);
