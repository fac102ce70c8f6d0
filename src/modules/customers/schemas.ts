import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { CustomFields, CustomFieldsOut, EmailField, Name, Phone } from '../catalog/fields.js';

const Fields = {
  firstName: Name(255),
  lastName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  email: EmailField({ required: 'CUSTOMER-103' }),
  phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  ...CustomFields(),
};

export const Customer = Type.Object(
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

export const CustomerCreateBody = Type.Object(Fields, { additionalProperties: false });
export const CustomerUpdateBody = Type.Object(
  { ...Fields, firstName: Type.Optional(Fields.firstName), email: Type.Optional(Fields.email) },
  { additionalProperties: false },
);
export const CustomerListQuery = Type.Object({
  ...PageQueryFields(100),
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact email, ignoring case' })),
});

export type CustomerCreate = Static<typeof CustomerCreateBody>;
export type CustomerUpdate = Static<typeof CustomerUpdateBody>;
