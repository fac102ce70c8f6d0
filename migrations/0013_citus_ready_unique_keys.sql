-- Every unique key of a tenant table includes company_id, so the tables can be distributed by
-- company_id on Citus (docs/scaling.md). The three secret-hash keys below were unique on their own;
-- a 256-bit random secret never repeats, so keying them per company loses nothing. The lookups by
-- hash alone (an invitation accepted, a selection code exchanged) keep a plain index: they are the
-- documented cross-tenant reads (test/platform/citus-readiness.test.ts lists them).
drop index invitations_token_key;
create unique index invitations_token_key on invitations (company_id, token_hash);
create index invitations_token_hash_idx on invitations (token_hash);

drop index external_calendar_connections_state_idx;
create unique index external_calendar_connections_state_idx on external_calendar_connections (company_id, state_nonce) where state_nonce is not null;

drop index external_calendar_connections_code_idx;
create unique index external_calendar_connections_code_idx on external_calendar_connections (company_id, selection_code_hash) where selection_code_hash is not null;
create index external_calendar_connections_code_hash_idx on external_calendar_connections (selection_code_hash) where selection_code_hash is not null;
