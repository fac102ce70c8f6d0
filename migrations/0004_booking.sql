-- Booking: where an appointment came from, the transactional outbox of appointment events, and
-- idempotency keys for retried creates. Tenant tables: company_id leads every key.

-- 'api' for authenticated callers, 'public' for a public booking page: a public caller may only
-- book a hold that a public booking page made.
alter table appointments add column created_via text not null default 'api' check (created_via in ('api', 'public'));

-- Events written in the same transaction as the appointment change that emits them, so an event
-- exists exactly when its change committed. The delivery worker (webhooks, notifications) marks
-- processed_at; pending rows are found by the partial index.
create table outbox_events (
  company_id uuid not null references companies (id),
  id uuid not null,
  trigger text not null check (trigger in ('NEW_APPOINTMENT', 'APPOINTMENT_CONFIRMED', 'APPOINTMENT_CANCELLED', 'APPOINTMENT_RESCHEDULED', 'APPOINTMENT_REMINDER')),
  appointment_id uuid not null,
  location_id uuid not null,
  -- the appointment as the API returned it when the event happened
  payload jsonb not null,
  created_at timestamptz not null default clock_timestamp(),
  processed_at timestamptz,
  primary key (company_id, id),
  foreign key (company_id, appointment_id) references appointments (company_id, id)
);
create index outbox_events_pending_idx on outbox_events (created_at) where processed_at is null;
create index outbox_events_appointment_idx on outbox_events (company_id, appointment_id);

-- The first committed answer to a POST with an Idempotency-Key. The row is inserted before the
-- work, so a concurrent retry waits on the unique key and then reads the stored answer.
create table idempotency_keys (
  company_id uuid not null references companies (id),
  key text not null,
  request_hash text not null,
  status_code integer,
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (company_id, key)
);
create index idempotency_keys_created_idx on idempotency_keys (created_at);

-- Appointment lists filtered by customer or status walk these in sort order.
create index appointments_location_time_idx on appointments (company_id, location_id, start_time, id);

-- Millisecond precision, the precision of a JavaScript Date: the cursor carries the position's
-- created_at as epoch milliseconds, and a keyset walk needs it to equal the stored value exactly.
alter table appointments alter column created_at type timestamptz(3);
alter table appointments alter column created_at set default date_trunc('milliseconds', now());
