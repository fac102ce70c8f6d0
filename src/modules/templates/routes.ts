import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { IdParams, Security, Uuid, errorResponses } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { Principal } from '../../platform/auth/principal.js';
import { forbidden } from '../../platform/errors.js';
import { StringEnum } from '../catalog/fields.js';
import { CHANNELS, RECIPIENT_TYPES, TEMPLATE_TYPES } from './defaults.js';
import type { TemplateService } from './service.js';

const TemplateTypeField = (description?: string) => StringEnum(TEMPLATE_TYPES, description ? { description } : {});
const RecipientTypeField = () => StringEnum(RECIPIENT_TYPES);
const ChannelField = (description: string) => StringEnum(CHANNELS, { description });

const SUBJECT_MAX = 500;
const BODY_MAX = 20_000;

const Template = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    type: TemplateTypeField(),
    recipientType: RecipientTypeField(),
    channel: ChannelField('EMAIL or SMS'),
    subject: Type.String({ description: 'Handlebars; for SMS stored but never sent' }),
    body: Type.String({ description: 'Handlebars; plain text' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'NotificationTemplate' },
);

const DefaultTemplate = Type.Object(
  {
    type: TemplateTypeField(),
    recipientType: RecipientTypeField(),
    channel: ChannelField('EMAIL or SMS'),
    subject: Type.String(),
    body: Type.String(),
    isDefault: Type.Literal(true),
  },
  { $id: 'DefaultNotificationTemplate' },
);

const ListQuery = Type.Object({
  channel: Type.Optional(ChannelField('EMAIL (default) or SMS')),
  type: Type.Optional(TemplateTypeField()),
  recipientType: Type.Optional(RecipientTypeField()),
});

// Templates are company-wide settings; Resource-role users have no access to them.
const ACCESS = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };

/**
 * A company-wide template speaks for every location, so a User limited to some locations may read
 * templates but not change them (issue 12); Owners, Admins and unscoped Users may.
 */
function assertMayEditTemplates(principal: Principal | null) {
  if (principal?.kind === 'dashboard' && principal.role === 'User' && principal.locationAccessMode === 'LOCATIONS') {
    throw forbidden('Templates are company-wide: a user limited to some locations cannot change them');
  }
}
const TAGS = ['Templates'];

export function registerTemplateRoutes(app: App, { templates }: { templates: TemplateService }) {
  app.addSchema(Template);
  app.addSchema(DefaultTemplate);
  const ref = Type.Ref('NotificationTemplate');

  app.get(
    '/v3/emailTemplates',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: "List the company's own templates of a channel (default EMAIL); types without one use the platform default",
        security: Security.company,
        querystring: ListQuery,
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { channel = 'EMAIL', type, recipientType } = request.query;
      return { data: await templates.list(requireCompany(request.principal).companyId, { channel, type, recipientType }) };
    },
  );

  app.get(
    '/v3/emailTemplates/defaults',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'List the platform default templates of a channel (default EMAIL): what is sent when the company has no template',
        security: Security.company,
        querystring: ListQuery,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('DefaultNotificationTemplate')) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      requireCompany(request.principal);
      const { channel = 'EMAIL', type, recipientType } = request.query;
      return { data: templates.defaults({ channel, type, recipientType }).map((t) => ({ ...t, isDefault: true as const })) };
    },
  );

  app.post(
    '/v3/emailTemplates',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Save the template of (type, recipientType, channel): 201 when created, 200 when it replaced the existing one',
        security: Security.company,
        body: Type.Object(
          {
            type: TemplateTypeField('EXTERNAL_CALENDAR_EVENT cannot use channel SMS'),
            recipientType: RecipientTypeField(),
            channel: Type.Optional(ChannelField('EMAIL (default) or SMS')),
            subject: Type.Optional(
              Type.String({ maxLength: SUBJECT_MAX, description: 'Required for EMAIL; for SMS stored but never sent. Handlebars merge variables.' }),
            ),
            body: Type.String({ minLength: 1, maxLength: BODY_MAX, description: 'Handlebars merge variables; nested {{#each}} blocks are refused' }),
          },
          { additionalProperties: false },
        ),
        response: { 200: ref, 201: ref, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      assertMayEditTemplates(request.principal);
      const { template, created } = await templates.upsert(requireCompany(request.principal).companyId, request.body);
      return reply.status(created ? 201 : 200).send(template);
    },
  );

  app.delete(
    '/v3/emailTemplates/:id',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: "Delete a company's template (the platform default applies again)",
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      assertMayEditTemplates(request.principal);
      await templates.remove(requireCompany(request.principal).companyId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
