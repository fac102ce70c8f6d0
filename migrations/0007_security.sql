-- Security review (issue 12): sessions that end with a password change, sign-in lockout, email
-- ownership, external identities linked by issuer and subject, invitations, and the public
-- booking page's unconfirmed customers.

-- Every dashboard JWT carries the version it was issued under; a password change (or an account
-- reset by an invitation) bumps it, which ends every session issued before.
alter table users add column token_version integer not null default 0;
-- When the user proved they read mail at this address (a verification link, an accepted
-- invitation, or an identity provider's email_verified). Accounts that exist already are taken as
-- proven: they were created before there was any way to prove it.
alter table users add column email_verified_at timestamptz;
update users set email_verified_at = created_at;
-- Consecutive failed sign-ins and the lock they earned (backoff that doubles per failure).
alter table users add column failed_sign_ins integer not null default 0;
alter table users add column sign_in_locked_until timestamptz;

-- An external OpenID Connect identity belongs to one user, found by (issuer, subject), never by
-- an email claim alone.
create table external_identities (
  issuer text not null,
  subject text not null,
  user_id uuid not null references users (id),
  created_at timestamptz not null default now(),
  primary key (issuer, subject)
);
create index external_identities_user_idx on external_identities (user_id);

-- setUsers for someone who is not yet a member: the membership takes effect only when the person
-- who reads mail at the address accepts with the token sent there (only its SHA-256 is kept).
create table invitations (
  company_id uuid not null references companies (id),
  id uuid not null,
  email text not null,
  role text not null check (role in ('Owner', 'Admin', 'User', 'Resource')),
  location_access_mode text not null default 'COMPANY' check (location_access_mode in ('COMPANY', 'LOCATIONS')),
  allowed_location_ids uuid[] not null default '{}',
  linked_resource_id uuid,
  token_hash text not null,
  invited_by_user_id uuid references users (id),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (company_id, id)
);
-- One pending invitation per address and company: inviting again replaces its token.
create unique index invitations_pending_email_key on invitations (company_id, lower(email)) where accepted_at is null;
create unique index invitations_token_key on invitations (token_hash);

-- A public booking page that names an existing customer's email proves nothing about it: such an
-- appointment keeps the customer's record as it is and sends the customer no message.
alter table appointments add column customer_unconfirmed boolean not null default false;
