-- Unavailability (blocks, recurring blocks, holidays, allocations) and appointments.
-- Tenant tables: company_id leads every key; scope ids are composite foreign keys.

create table blocks (
  company_id uuid not null references companies (id),
  id uuid not null,
  -- exactly one scope: a whole location, one resource, or one service
  location_id uuid,
  resource_id uuid,
  service_id uuid,
  start_time timestamptz not null,
  end_time timestamptz not null,
  reason text,
  created_at timestamptz not null default now(),
  primary key (company_id, id),
  check (end_time > start_time),
  check (num_nonnulls(location_id, resource_id, service_id) = 1),
  foreign key (company_id, location_id) references locations (company_id, id),
  foreign key (company_id, resource_id) references resources (company_id, id),
  foreign key (company_id, service_id) references services (company_id, id)
);
create index blocks_time_idx on blocks (company_id, start_time, end_time);

create table recurring_blocks (
  company_id uuid not null references companies (id),
  id uuid not null,
  name text not null,
  frequency text not null check (frequency in ('DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'YEARLY')),
  interval integer not null default 1 check (interval >= 1),
  start_date date not null,
  end_date date,
  start_time text not null,
  end_time text not null,
  iana text not null,
  weekdays integer[] not null default '{}',
  day_of_month integer check (day_of_month between 1 and 31),
  location_id uuid,
  resource_id uuid,
  service_id uuid,
  legacy_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id),
  check (num_nonnulls(location_id, resource_id, service_id) = 1),
  foreign key (company_id, location_id) references locations (company_id, id),
  foreign key (company_id, resource_id) references resources (company_id, id),
  foreign key (company_id, service_id) references services (company_id, id)
);
create index recurring_blocks_scope_idx on recurring_blocks (company_id, location_id, resource_id, service_id);

create table holidays (
  company_id uuid not null references companies (id),
  id uuid not null,
  location_id uuid not null,
  date date not null,
  name text not null,
  created_at timestamptz not null default now(),
  primary key (company_id, id),
  foreign key (company_id, location_id) references locations (company_id, id)
);
-- one holiday per location and date
create unique index holidays_location_date_key on holidays (company_id, location_id, date);

-- Allocations: the bookable windows of allocation-type services, scoped by location and
-- optionally service and resource. A set is replaced whole (setWeeklyAllocations).
create table weekly_allocations (
  company_id uuid not null references companies (id),
  id uuid not null,
  location_id uuid not null,
  service_id uuid,
  resource_id uuid,
  day text not null check (day in ('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')),
  start_time text not null,
  end_time text not null,
  bookings_per_slot integer check (bookings_per_slot >= 1),
  legacy_id text,
  created_at timestamptz not null default now(),
  primary key (company_id, id),
  foreign key (company_id, location_id) references locations (company_id, id),
  foreign key (company_id, service_id) references services (company_id, id),
  foreign key (company_id, resource_id) references resources (company_id, id)
);
create index weekly_allocations_scope_idx on weekly_allocations (company_id, location_id, service_id, resource_id);

create table single_allocations (
  company_id uuid not null references companies (id),
  id uuid not null,
  location_id uuid not null,
  service_id uuid,
  resource_id uuid,
  date date not null,
  start_time text not null,
  end_time text not null,
  bookings_per_slot integer check (bookings_per_slot >= 1),
  legacy_id text,
  created_at timestamptz not null default now(),
  primary key (company_id, id),
  foreign key (company_id, location_id) references locations (company_id, id),
  foreign key (company_id, service_id) references services (company_id, id),
  foreign key (company_id, resource_id) references resources (company_id, id)
);
create index single_allocations_scope_idx on single_allocations (company_id, location_id, date);

create table appointments (
  company_id uuid not null references companies (id),
  id uuid not null,
  location_id uuid not null,
  service_id uuid not null,
  customer_id uuid,
  -- IN hold, RS reserved, BK booked, CN cancelled, RE rescheduled away
  status text not null check (status in ('IN', 'RS', 'BK', 'CN', 'RE')),
  start_time timestamptz not null,
  end_time timestamptz not null,
  duration integer not null,
  -- padding minutes of the service when booked: the slot stays occupied that long after end_time
  padding integer not null default 0,
  expires_at timestamptz,
  confirmed boolean not null default false,
  allow_padding_overflow boolean not null default false,
  ignore_external_events boolean not null default false,
  notes text,
  field1 text, field2 text, field3 text, field4 text, field5 text,
  field6 text, field7 text, field8 text, field9 text, field10 text,
  rescheduled_from_id uuid,
  rescheduled_to_id uuid,
  legacy_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id),
  check (end_time > start_time),
  foreign key (company_id, location_id) references locations (company_id, id),
  foreign key (company_id, service_id) references services (company_id, id),
  foreign key (company_id, customer_id) references customers (company_id, id)
);
create index appointments_time_idx on appointments (company_id, start_time, id);
create index appointments_created_idx on appointments (company_id, created_at, id);
create index appointments_service_day_idx on appointments (company_id, service_id, start_time) where status in ('IN', 'RS', 'BK');
create index appointments_customer_idx on appointments (company_id, customer_id, service_id);

-- One row per resource of an appointment, with the appointment's time and status copied in, so
-- "what holds this resource between t1 and t2" is one index range scan.
create table appointment_resources (
  company_id uuid not null,
  appointment_id uuid not null,
  resource_id uuid not null,
  start_time timestamptz not null,
  end_time timestamptz not null,
  status text not null,
  expires_at timestamptz,
  primary key (company_id, appointment_id, resource_id),
  foreign key (company_id, appointment_id) references appointments (company_id, id),
  foreign key (company_id, resource_id) references resources (company_id, id)
);
create index appointment_resources_busy_idx on appointment_resources (company_id, resource_id, start_time)
  where status in ('IN', 'RS', 'BK');
