-- External calendars (decisions.md "External calendars"): a resource's connections to Google,
-- Microsoft Graph or a CalDAV server, the calendars selected from each, the busy intervals read
-- from them, and the events written back for booked appointments. Tenant tables: company_id
-- leads every key, and every table joins on it.

create table external_calendar_connections (
  company_id uuid not null references companies (id),
  id uuid not null,
  resource_id uuid not null,
  provider text not null check (provider in ('google', 'microsoft', 'caldav')),
  status text not null check (status in ('pending', 'connected', 'error')),
  use_selection boolean not null default false,
  -- where GET /v3/calendar/callback sends the browser back (host in the company's allowedDomains)
  redirect_url text,
  -- the OAuth dance: the signed state's nonce (cleared when used: a state works once), its
  -- expiry, and the PKCE verifier (encrypted)
  state_nonce text,
  state_expires_at timestamptz,
  code_verifier_enc text,
  -- the one-time code exchanged for a Calendar Selection Token (sha256, 10 minutes)
  selection_code_hash text,
  selection_code_expires_at timestamptz,
  -- AES-256-GCM (platform/encryption.ts): OAuth tokens, or the CalDAV url, user name and password
  credentials_enc text,
  write_calendar_id text,
  last_synced_at timestamptz,
  last_error text,
  next_sync_at timestamptz,
  -- a sync in progress (one instance at a time; a stopped instance's claim runs out)
  sync_claimed_at timestamptz,
  sync_claimed_by text,
  created_at timestamptz not null default now(),
  primary key (company_id, id),
  foreign key (company_id, resource_id) references resources (company_id, id)
);
create index external_calendar_connections_resource_idx on external_calendar_connections (company_id, resource_id);
create index external_calendar_connections_due_idx on external_calendar_connections (next_sync_at) where status = 'connected';
create unique index external_calendar_connections_state_idx on external_calendar_connections (state_nonce) where state_nonce is not null;
create unique index external_calendar_connections_code_idx on external_calendar_connections (selection_code_hash) where selection_code_hash is not null;

create table external_calendars (
  company_id uuid not null,
  connection_id uuid not null,
  calendar_id text not null,
  name text not null,
  -- the provider's incremental cursor (syncToken, deltaLink, sync-token or ctag); null: full sync next
  sync_cursor text,
  primary key (company_id, connection_id, calendar_id),
  foreign key (company_id, connection_id) references external_calendar_connections (company_id, id) on delete cascade
);

create table external_busy_intervals (
  company_id uuid not null,
  connection_id uuid not null,
  calendar_id text not null,
  event_key text not null,
  resource_id uuid not null,
  start_time timestamptz not null,
  end_time timestamptz not null,
  transparency text,
  event_type text,
  primary key (company_id, connection_id, calendar_id, event_key),
  foreign key (company_id, connection_id, calendar_id) references external_calendars (company_id, connection_id, calendar_id) on delete cascade
);
-- availability and the unavailability calendar read a resource's intervals overlapping a window
create index external_busy_intervals_resource_idx on external_busy_intervals (company_id, resource_id, start_time);

-- Write-back: per appointment and connection, the event we keep in the write calendar. The row
-- says what should be there (present at these times, or absent); the calendar worker makes it so,
-- retrying with backoff, and keeps the provider's event id so a retry never adds a second event.
create table external_event_writes (
  company_id uuid not null,
  appointment_id uuid not null,
  connection_id uuid not null,
  calendar_id text not null,
  provider_event_id text,
  -- the appointment the provider event is keyed on (its id, UID or transactionId): the first
  -- appointment of a reschedule chain, so a retry by a replacement finds the same event
  event_appointment_id uuid not null,
  desired text not null check (desired in ('present', 'absent')),
  start_time timestamptz,
  end_time timestamptz,
  done boolean not null default false,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  claimed_at timestamptz,
  claimed_by text,
  -- bumped by every new wish, so a worker finishing an older one cannot mark the newer one done
  revision integer not null default 0,
  updated_at timestamptz not null default now(),
  primary key (company_id, appointment_id, connection_id),
  foreign key (company_id, connection_id) references external_calendar_connections (company_id, id) on delete cascade
);
create index external_event_writes_due_idx on external_event_writes (next_attempt_at) where not done;
create index external_event_writes_connection_idx on external_event_writes (company_id, connection_id, provider_event_id);
