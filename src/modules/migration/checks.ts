// The v3 rules a planned record must pass before it is written: the same body schemas and domain
// checks the create routes apply, so an imported record is one the API itself would accept.
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { createBodyAjv } from '../../platform/validation.js';
import { serviceSettingProblems } from '../../domain/service-rules.js';
import { weeklyScheduleProblems } from '../../domain/weekly-availability.js';
import type { MigrationKind, MigrationPlan, RecordNote } from '../../domain/migration/plan.js';
import { LocationCreateBody } from '../locations/schemas.js';
import { ServiceCreateBody } from '../services/schemas.js';
import { ResourceCreateBody } from '../resources/schemas.js';
import { CustomerCreateBody } from '../customers/schemas.js';
import { RecurringCreateBody, SingleAllocationsBody, WeeklyAllocationsBody } from '../unavailability/schemas.js';
import { allocationProblems, recurrenceProblems } from '../unavailability/rules.js';

/** Any v3 id: the schemas ask for one in scope fields that the importer fills in later. */
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'the record'} ${e.message ?? 'is not valid'}`)
    .join('; ');
}

/**
 * The validators of the create bodies, compiled once per process: the schemas are constants, and a
 * process that builds many apps (the test runner runs many test files in one process) would
 * otherwise compile them for each (about 0.3 s of CPU). Still compiled when the first app is built,
 * so a schema that cannot compile stops the server at start.
 */
type PlanValidators = Record<'location' | 'service' | 'resource' | 'customer' | 'recurringBlock' | 'weekly' | 'single', ValidateFunction>;
let compiledValidators: PlanValidators | undefined;
function planValidators(): PlanValidators {
  if (compiledValidators) return compiledValidators;
  const ajv = createBodyAjv();
  const compile = (schema: TSchema): ValidateFunction => ajv.compile(schema);
  compiledValidators = {
    location: compile(LocationCreateBody),
    service: compile(ServiceCreateBody),
    resource: compile(ResourceCreateBody),
    customer: compile(CustomerCreateBody),
    recurringBlock: compile(RecurringCreateBody),
    weekly: compile(WeeklyAllocationsBody),
    single: compile(SingleAllocationsBody),
  };
  return compiledValidators;
}

export function createPlanChecks() {
  const validators = planValidators();
  /** A copy, so Ajv's defaults never change the planned record. */
  const valid = (validate: ValidateFunction, body: unknown): string | null => (validate(structuredClone(body)) ? null : describe(validate.errors));

  /**
   * The plan without the records v3 would refuse; each refused record is added to `failed` with
   * the rule it breaks. Allocation sets lose only the v1 allocations that break a rule.
   */
  return function checkPlan(plan: MigrationPlan): MigrationPlan {
    const failed: RecordNote[] = [...plan.failed];
    const keep = <T>(kind: MigrationKind, items: T[], legacyIdOf: (item: T) => string, problem: (item: T) => string | null): T[] =>
      items.filter((item) => {
        const message = problem(item);
        if (message) failed.push({ kind, legacyId: legacyIdOf(item), message });
        return !message;
      });

    const locations = keep('locations', plan.locations, (l) => l.fields.legacyId, (l) => {
      const body = { ...l.fields, address: l.fields.address ?? undefined };
      return valid(validators.location, body) ?? weekly(l.fields.weeklyAvailability);
    });
    const services = keep('services', plan.services, (s) => s.fields.legacyId, (s) => {
      const schema = valid(validators.service, s.fields);
      if (schema) return schema;
      const f = s.fields;
      const problems = serviceSettingProblems({
        duration: f.duration,
        durationSelect: f.durationSelect ?? false,
        durationMin: f.durationMin ?? null,
        durationMax: f.durationMax ?? null,
        durationInterval: f.durationInterval ?? null,
        bookAheadUnit: f.bookAheadUnit ?? 'none',
        bookAheadValue: f.bookAheadValue ?? null,
      });
      return problems.length ? problems.map((p) => `${p.path}: ${p.msg}`).join('; ') : weekly(f.weeklyAvailability);
    });
    const resources = keep('resources', plan.resources, (r) => r.fields.legacyId, (r) => valid(validators.resource, r.fields) ?? weekly(r.fields.weeklyAvailability));
    const recurringBlocks = keep('recurringBlocks', plan.recurringBlocks, (b) => b.fields.legacyId, (b) => {
      const schema = valid(validators.recurringBlock, { ...b.fields, ResourceId: PLACEHOLDER_ID });
      if (schema) return schema;
      const problems = recurrenceProblems(b.fields, 'RESOURCEBLOCK');
      return problems.length ? problems.map((p) => `${p.path}: ${p.msg}`).join('; ') : null;
    });
    const customers = keep('customers', plan.customers, (c) => c.fields.legacyId, (c) => valid(validators.customer, c.fields));

    const allocationSets = plan.allocationSets.map((set) => {
      const pair = set.scope.serviceLegacyId !== null && set.scope.resourceLegacyId !== null;
      const check = <T extends { legacyId: string; start: string; end: string }>(kind: MigrationKind, items: T[], validate: ValidateFunction, dayOf: (item: T) => string) => {
        const refused = new Set<string>();
        for (const item of items) {
          const message = valid(validate, { allocations: [item] }) ?? firstProblem(allocationProblems([item], { dayOf, family: 'SERVICEALLOCATION', pair }));
          if (message && !refused.has(item.legacyId)) {
            refused.add(item.legacyId);
            failed.push({ kind, legacyId: item.legacyId, message });
          }
        }
        return items.filter((item) => !refused.has(item.legacyId));
      };
      return {
        scope: set.scope,
        weekly: check('weeklyAllocations', set.weekly, validators.weekly, (w) => w.day),
        single: check('singleAllocations', set.single, validators.single, (s) => s.date),
      };
    });

    return { ...plan, locations, services, resources, recurringBlocks, customers, allocationSets, failed };
  };
}

function weekly(schedule: Parameters<typeof weeklyScheduleProblems>[0] | null): string | null {
  return schedule ? firstProblem(weeklyScheduleProblems(schedule, 'weeklyAvailability')) : null;
}

function firstProblem(problems: Array<{ path?: string; msg: string }>): string | null {
  return problems.length ? problems.map((p) => (p.path ? `${p.path}: ${p.msg}` : p.msg)).join('; ') : null;
}

export type PlanChecks = ReturnType<typeof createPlanChecks>;
