import { randomUUID } from 'node:crypto';
import { ApiError, fieldError, notFound } from '../../platform/errors.js';
import { isUniqueViolation } from '../../platform/database/errors.js';
import { pageOf, pageWindow } from '../catalog/graph.js';
import type { CustomerRepository, CustomerRow } from './repository.js';
import type { CustomerCreate, CustomerUpdate } from './schemas.js';

const DUPLICATE_EMAIL = 'A customer with this email already exists in the company';

export function createCustomerService({ repository }: { repository: Pick<CustomerRepository, 'insert' | 'byId' | 'page' | 'update'> }) {
  function view(row: CustomerRow) {
    const { companyId: _companyId, archivedAt: _archivedAt, createdAt, updatedAt, ...fields } = row;
    return { ...fields, companyId: row.companyId, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
  }

  /** The unique index decides, so two concurrent creates with one email cannot both succeed. */
  async function guardDuplicate<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, 'customers_email_key')) throw new ApiError(409, DUPLICATE_EMAIL, [fieldError('body', 'email', DUPLICATE_EMAIL, 'CUSTOMER-101')], 'CUSTOMER-101');
      throw error;
    }
  }

  return {
    async create(companyId: string, input: CustomerCreate) {
      const row = await guardDuplicate(() => repository.insert({ ...input, companyId, id: randomUUID() }));
      return view(row);
    },

    async read(companyId: string, id: string) {
      const row = await repository.byId(companyId, id);
      if (!row) throw notFound('Customer not found');
      return view(row);
    },

    async list(companyId: string, query: { limit: number; page: number; email?: string | undefined }) {
      const { rows, total } = await repository.page(companyId, { email: query.email }, pageWindow(query));
      return pageOf(rows.map(view), query.page, query.limit, total);
    },

    async update(companyId: string, id: string, input: CustomerUpdate) {
      const row = await guardDuplicate(() => repository.update(companyId, id, input));
      if (!row) throw notFound('Customer not found');
      return view(row);
    },

    async archive(companyId: string, id: string) {
      if (!(await repository.update(companyId, id, { archivedAt: new Date() }))) throw notFound('Customer not found');
    },
  };
}

export type CustomerService = ReturnType<typeof createCustomerService>;
