-- Foundation: identity, companies, credentials.
--
-- Distribution on Citus: users and companies are reference tables (small, read on every request);
-- every tenant table carries company_id, includes it in its primary key and unique constraints,
-- and can be distributed by it.

create table service_secrets (
  name text primary key,
  value text not null,
  created_at timestamptz not null default now()
);

create table users (
  id uuid primary key,
  email text not null,
  name text not null,
  -- null for users who only ever sign in through an external OpenID Connect issuer
  password_hash text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table companies (
  id uuid primary key,
  name text not null,
  -- the API key is shown once; only its SHA-256 and a short prefix for recognition are kept
  api_key_hash text not null unique,
  api_key_prefix text not null,
  public_client_id text not null unique,
  allowed_domains text[] not null default '{}',
  disable_email_notifications boolean not null default false,
  disable_sms_notifications boolean not null default false,
  suspended_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- prefix search on the name, case-insensitive
create index companies_name_prefix_idx on companies (lower(name) text_pattern_ops);

create table company_users (
  company_id uuid not null references companies (id),
  user_id uuid not null references users (id),
  role text not null check (role in ('Owner', 'Admin', 'User', 'Resource')),
  location_access_mode text not null default 'COMPANY' check (location_access_mode in ('COMPANY', 'LOCATIONS')),
  allowed_location_ids uuid[] not null default '{}',
  linked_resource_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (company_id, user_id)
);
create index company_users_user_idx on company_users (user_id);

create table client_credentials (
  company_id uuid not null references companies (id),
  id uuid not null,
  client_id text not null,
  -- SHA-256 of a 256-bit random secret: a slow hash adds nothing for a secret of that strength
  secret_hash text not null,
  name text,
  created_by_user_id uuid references users (id),
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  primary key (company_id, id),
  unique (company_id, client_id)
);
-- the token endpoint finds a client by client_id alone; 128 random bits keep it unique
create index client_credentials_client_id_idx on client_credentials (client_id);

create table refresh_tokens (
  company_id uuid not null references companies (id),
  id uuid not null,
  user_id uuid not null references users (id),
  -- every rotation stays in one family; reuse of a spent token revokes the whole family
  family_id uuid not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (company_id, id)
);
create index refresh_tokens_family_idx on refresh_tokens (company_id, family_id);
