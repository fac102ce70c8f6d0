import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { CustomFields, CustomFieldsOut, EmailField, Name, Phone } from '../catalog/fields.js';
import type { CustomerService, CustomerWrite } from './service.js';


const Fields = {
  firstName: Name(255),
  lastName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  email: EmailField({ required: 'CUSTOMER-103' }),
  phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  ...CustomFields(),
};

const Customer = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    firstName: Type.String(),
    lastName: Nullable(Type.String()),
    email: Type.String(),
    phone: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    legacyId: Nullable(Type.String()),
    ...CustomFieldsOut(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Customer' },
);

// Customers are company-wide; Resource-role users have no access to them.
const ACCESS = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };
const TAGS = ['Customers'];

export function registerCustomerRoutes(app: App, { customers }: { customers: CustomerService }) {
  app.addSchema(Customer);
  const ref = Type.Ref('Customer');

  app.post(
    '/v3/customer',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Create a customer (email unique in the company: a duplicate is 409)',
        security: Security.company,
        body: Type.Object(Fields, { additionalProperties: false }),
        response: { 201: ref, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await customers.create(requireCompany(request.principal).companyId, request.body as CustomerWrite & { firstName: string; email: string })),
  );

  app.get(
    '/v3/customers',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'List customers',
        security: Security.company,
        querystring: Type.Object({ ...PageQueryFields(100), email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact email, ignoring case' })) }),
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, email } = request.query;
      return customers.list(requireCompany(request.principal).companyId, { limit, page, email });
    },
  );

  app.get(
    '/v3/customer/:id',
    {
      config: ACCESS,
      schema: { tags: TAGS, summary: 'Read a customer', security: Security.company, params: IdParams, response: { 200: ref, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => customers.read(requireCompany(request.principal).companyId, request.params.id),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a customer (fields given; the rest stay)',
    security: Security.company,
    params: IdParams,
    body: Type.Object({ ...Fields, firstName: Type.Optional(Fields.firstName), email: Type.Optional(Fields.email) }, { additionalProperties: false }),
    response: { 200: ref, ...errorResponses(400, 401, 403, 404, 409) },
  };
  app.put('/v3/customer/:id', { config: ACCESS, schema: updateSchema }, async (request) =>
    customers.update(requireCompany(request.principal).companyId, request.params.id, request.body as CustomerWrite),
  );
  app.patch('/v3/customer/:id', { config: ACCESS, schema: updateSchema }, async (request) =>
    customers.update(requireCompany(request.principal).companyId, request.params.id, request.body as CustomerWrite),
  );

  app.delete(
    '/v3/customer/:id',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Archive a customer (a missing id is 400)',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await customers.archive(requireCompany(request.principal).companyId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
