-- Webhooks, notification templates, the notifications log, reminders, and delivery state of the
-- outbox. Tenant tables: company_id leads every key.

create table webhooks (
  company_id uuid not null references companies (id),
  id uuid not null,
  location_id uuid not null,
  url text not null,
  headers jsonb not null default '{}',
  triggers text[] not null default '{}',
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id),
  foreign key (company_id, location_id) references locations (company_id, id)
);
create index webhooks_location_idx on webhooks (company_id, location_id);

-- One row per (webhook, event): inserted before the request is sent, so a delivery is attempted at
-- most once even when a crashed worker's events are claimed again.
create table webhook_deliveries (
  company_id uuid not null references companies (id),
  id uuid not null,
  webhook_id uuid not null,
  event_id uuid not null,
  trigger text not null,
  appointment_id uuid not null,
  url text not null,
  -- pending until the attempt ends; then delivered (2xx) or failed (anything else, refused included)
  outcome text not null default 'pending' check (outcome in ('pending', 'delivered', 'failed')),
  status_code integer,
  error text,
  duration_ms integer,
  address text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (company_id, id),
  unique (company_id, webhook_id, event_id),
  foreign key (company_id, webhook_id) references webhooks (company_id, id) on delete cascade
);
create index webhook_deliveries_list_idx on webhook_deliveries (company_id, webhook_id, created_at desc, id desc);
create index webhook_deliveries_event_idx on webhook_deliveries (company_id, event_id);

create table notification_templates (
  company_id uuid not null references companies (id),
  id uuid not null,
  type text not null check (type in ('APPOINTMENT_BOOKED', 'APPOINTMENT_CONFIRMED', 'APPOINTMENT_CANCELLED', 'APPOINTMENT_RESCHEDULED', 'APPOINTMENT_REMINDER', 'EXTERNAL_CALENDAR_EVENT')),
  recipient_type text not null check (recipient_type in ('CUSTOMER', 'RESOURCE', 'BUSINESS')),
  channel text not null default 'EMAIL' check (channel in ('EMAIL', 'SMS')),
  subject text not null default '',
  body text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id),
  unique (company_id, type, recipient_type, channel),
  check (not (type = 'EXTERNAL_CALENDAR_EVENT' and channel = 'SMS'))
);

-- Every message built for an event, sent or not, with the reason when not.
create table notifications (
  company_id uuid not null references companies (id),
  id uuid not null,
  event_id uuid not null,
  appointment_id uuid not null,
  type text not null,
  channel text not null check (channel in ('EMAIL', 'SMS')),
  recipient_type text not null check (recipient_type in ('CUSTOMER', 'RESOURCE', 'BUSINESS')),
  recipient text not null,
  subject text,
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'sent', 'not_sent', 'failed')),
  reason text,
  provider_id text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (company_id, id),
  unique (company_id, event_id, channel, recipient_type, recipient)
);
create index notifications_list_idx on notifications (company_id, created_at desc, id desc);
create index notifications_appointment_idx on notifications (company_id, appointment_id);

-- Reminder offsets in minutes before the start (for example {1440, 60}); a location's list, when
-- set, replaces the company's.
alter table companies add column reminder_offsets integer[] not null default '{}';
alter table locations add column reminder_offsets integer[];

-- One row per appointment and offset: the reminder event is written with it, exactly once.
create table appointment_reminders (
  company_id uuid not null,
  appointment_id uuid not null,
  offset_minutes integer not null,
  event_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (company_id, appointment_id, offset_minutes),
  foreign key (company_id, appointment_id) references appointments (company_id, id)
);

-- Outbox claims: a worker claims pending events for a lease; a crashed worker's claims expire and
-- another takes them over (deliveries already attempted are not repeated).
alter table outbox_events add column claimed_at timestamptz;
alter table outbox_events add column claimed_by text;

create index appointments_booked_start_idx on appointments (start_time) where status = 'BK';
