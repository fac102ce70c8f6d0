import type { ColumnType, Generated } from 'kysely';

/** Column types of every table, in camelCase (the CamelCasePlugin maps them to snake_case). */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface ServiceSecretsTable {
  name: string;
  value: string;
  createdAt: CreatedAt;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface CompaniesTable {
  id: string;
  name: string;
  apiKeyHash: string;
  apiKeyPrefix: string;
  publicClientId: string;
  allowedDomains: ColumnType<string[], string[] | undefined, string[]>;
  disableEmailNotifications: Generated<boolean>;
  disableSmsNotifications: Generated<boolean>;
  suspendedAt: Date | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export type Role = 'Owner' | 'Admin' | 'User' | 'Resource';
export type LocationAccessMode = 'COMPANY' | 'LOCATIONS';

export interface CompanyUsersTable {
  companyId: string;
  userId: string;
  role: Role;
  locationAccessMode: Generated<LocationAccessMode>;
  allowedLocationIds: ColumnType<string[], string[] | undefined, string[]>;
  linkedResourceId: string | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface ClientCredentialsTable {
  companyId: string;
  id: string;
  clientId: string;
  secretHash: string;
  name: string | null;
  createdByUserId: string | null;
  createdAt: CreatedAt;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface RefreshTokensTable {
  companyId: string;
  id: string;
  userId: string;
  familyId: string;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  createdAt: CreatedAt;
}

export interface Database {
  serviceSecrets: ServiceSecretsTable;
  users: UsersTable;
  companies: CompaniesTable;
  companyUsers: CompanyUsersTable;
  clientCredentials: ClientCredentialsTable;
  refreshTokens: RefreshTokensTable;
}
