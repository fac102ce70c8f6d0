-- v1 ids to v3 records (GET /v3/mapping/ids, and the importer's "already migrated?" check):
-- one index per table that carries a legacy_id, led by company_id like every tenant key.
create index locations_legacy_idx on locations (company_id, legacy_id) where legacy_id is not null;
create index services_legacy_idx on services (company_id, legacy_id) where legacy_id is not null;
create index resources_legacy_idx on resources (company_id, legacy_id) where legacy_id is not null;
create index customers_legacy_idx on customers (company_id, legacy_id) where legacy_id is not null;
create index appointments_legacy_idx on appointments (company_id, legacy_id) where legacy_id is not null;
create index weekly_allocations_legacy_idx on weekly_allocations (company_id, legacy_id) where legacy_id is not null;
create index single_allocations_legacy_idx on single_allocations (company_id, legacy_id) where legacy_id is not null;
create index recurring_blocks_legacy_idx on recurring_blocks (company_id, legacy_id) where legacy_id is not null;
