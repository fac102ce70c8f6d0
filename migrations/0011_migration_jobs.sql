-- Migration from v1 (POST /v3/migration/sync): one row per run. A run writes its records in
-- small transactions, each of which also stores the run's progress, so the counts of what landed
-- are exact even after a crash, and another instance can resume the run when its lease runs out.
create table migration_jobs (
  company_id uuid not null references companies (id),
  id uuid not null,
  status text not null check (status in ('running', 'succeeded', 'failed')),
  dry_run boolean not null,
  source_type text not null check (source_type in ('api', 'export')),
  -- who asked (a dashboard user), for the record; null for the operator CLI
  requested_by uuid,
  -- {<kind>: {total, processed, created, skipped, failed}}
  progress jsonb not null default '{}',
  -- the final report ({dryRun, created, skipped, failed, ...}); null while running
  report jsonb,
  error text,
  -- how many times an instance started the run (a resume after a crash counts again)
  attempts integer not null default 1,
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (company_id, id)
);
-- One writing run per company at a time: a second is refused with 409 (dry runs write nothing).
create unique index migration_jobs_one_writer_key on migration_jobs (company_id) where status = 'running' and not dry_run;
-- The worker looks for runs whose instance stopped renewing the lease.
create index migration_jobs_lease_idx on migration_jobs (lease_until) where status = 'running';

-- What a run reads, kept only until it ends, so an instance that resumes it reads the same input.
-- For an API source the client secret is encrypted (platform/encryption.ts). No row: the run
-- cannot be resumed (the operator CLI reads its file itself) and is marked failed instead.
create table migration_job_sources (
  company_id uuid not null,
  job_id uuid not null,
  source jsonb not null,
  primary key (company_id, job_id),
  foreign key (company_id, job_id) references migration_jobs (company_id, id) on delete cascade
);

-- Imported appointments say where they came from (never shown to a public booking page).
alter table appointments drop constraint appointments_created_via_check;
alter table appointments add constraint appointments_created_via_check check (created_via in ('api', 'public', 'migration'));
