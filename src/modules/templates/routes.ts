import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { IdParams, Security, errorResponses } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { Principal } from '../../platform/auth/principal.js';
import { forbidden } from '../../platform/errors.js';
import { DefaultTemplate, Template, TemplateBody, TemplateListQuery } from './schemas.js';
import type { TemplateService } from './service.js';
import { WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';

// Templates are company-wide settings; Resource-role users have no access to them.
const ACCESS = WITHOUT_RESOURCE_ROLE;

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
        querystring: TemplateListQuery,
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
        querystring: TemplateListQuery,
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
        body: TemplateBody,
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
