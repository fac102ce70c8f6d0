-- Catalog: locations, services, resources, customers and the links between them.
-- Every table is a tenant table: company_id leads each key, and links join on it.

create table locations (
  company_id uuid not null references companies (id),
  id uuid not null,
  name text not null,
  timezone_name text not null,
  address jsonb,
  phone text,
  email text,
  -- opening hours: {"mon": [{"start": "09:00", "end": "17:00"}], ...}; null means always open
  weekly_availability jsonb,
  -- minutes a hold (IN) lasts before it expires (SETTINGS-102: 1 to 30)
  booking_timer_minutes integer not null default 10 check (booking_timer_minutes between 1 and 30),
  legacy_id text,
  archived_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id)
);
create index locations_list_idx on locations (company_id, name, id) where archived_at is null;

create table services (
  company_id uuid not null references companies (id),
  id uuid not null,
  name text not null,
  description text,
  duration integer not null check (duration > 0),
  duration_select boolean not null default false,
  duration_min integer,
  duration_max integer,
  duration_interval integer,
  availability_type text not null default 'schedule' check (availability_type in ('schedule', 'allocation')),
  weekly_availability jsonb,
  book_ahead_unit text not null default 'none' check (book_ahead_unit in ('none', 'days', 'weeks', 'months')),
  book_ahead_value integer,
  book_in_advance integer not null default 0,
  booking_limit integer not null default 0,
  max_booking_limit integer not null default 0,
  max_resource_booking_limit integer not null default 0,
  daily_booking_limit_count integer not null default 0,
  daily_booking_limit_minutes integer not null default 0,
  booking_interval integer,
  padding integer not null default 0,
  bookings_per_slot integer not null default 1 check (bookings_per_slot >= 1),
  fee_amount numeric(12, 2),
  fee_taxable boolean not null default false,
  cancellation_fee_amount numeric(12, 2),
  cancellation_fee_taxable boolean not null default false,
  non_refundable boolean not null default false,
  image_url text,
  show_online boolean not null default true,
  round_robin text not null default 'NONE' check (round_robin in ('NONE', 'RANDOM', 'BALANCED', 'COMBINED')),
  allow_padding_overflow boolean not null default false,
  ignore_external_events boolean not null default false,
  field1 text, field2 text, field3 text, field4 text, field5 text,
  field6 text, field7 text, field8 text, field9 text, field10 text,
  legacy_id text,
  archived_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id)
);
create index services_list_idx on services (company_id, name, id) where archived_at is null;

create table resources (
  company_id uuid not null references companies (id),
  id uuid not null,
  name text not null,
  email text,
  phone text,
  timezone_name text,
  weekly_availability jsonb,
  -- cap on active appointments per customer with this resource (0 = unlimited)
  booking_limit integer not null default 0,
  legacy_id text,
  archived_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id)
);
create index resources_list_idx on resources (company_id, name, id) where archived_at is null;

create table service_locations (
  company_id uuid not null,
  service_id uuid not null,
  location_id uuid not null,
  primary key (company_id, service_id, location_id),
  foreign key (company_id, service_id) references services (company_id, id),
  foreign key (company_id, location_id) references locations (company_id, id)
);
create index service_locations_location_idx on service_locations (company_id, location_id);

create table resource_locations (
  company_id uuid not null,
  resource_id uuid not null,
  location_id uuid not null,
  primary key (company_id, resource_id, location_id),
  foreign key (company_id, resource_id) references resources (company_id, id),
  foreign key (company_id, location_id) references locations (company_id, id)
);
create index resource_locations_location_idx on resource_locations (company_id, location_id);

create table resource_services (
  company_id uuid not null,
  resource_id uuid not null,
  service_id uuid not null,
  primary key (company_id, resource_id, service_id),
  foreign key (company_id, resource_id) references resources (company_id, id),
  foreign key (company_id, service_id) references services (company_id, id)
);
create index resource_services_service_idx on resource_services (company_id, service_id);

create table customers (
  company_id uuid not null references companies (id),
  id uuid not null,
  first_name text not null,
  last_name text,
  email text not null,
  phone text,
  notes text,
  field1 text, field2 text, field3 text, field4 text, field5 text,
  field6 text, field7 text, field8 text, field9 text, field10 text,
  legacy_id text,
  archived_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, id)
);
-- one live customer per email in a company (an archived one frees the address)
create unique index customers_email_key on customers (company_id, lower(email)) where archived_at is null;
create index customers_list_idx on customers (company_id, last_name, first_name, id) where archived_at is null;

-- a Resource-role user's linked resource must be the company's
alter table company_users
  add constraint company_users_linked_resource_fk
  foreign key (company_id, linked_resource_id) references resources (company_id, id);
