import swagger from '@fastify/swagger';
import { ErrorBodySchema } from './schemas.js';
import type { App } from './types.js';

/** The OpenAPI 3.1 generator over every route's schema; operations/routes.ts serves the finished document. */
export async function registerOpenApiGenerator(app: App): Promise<void> {
  app.addSchema(ErrorBodySchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Slotwise API',
        version: '3.0.0',
        description:
          'Multi-tenant appointment scheduling and booking. Every failure has the body `{success: false, message, errors[]}`. ' +
          'Authenticate with a machine token (OAuth 2.0 client credentials at POST /v3/oauth/token), a dashboard JWT plus x-api-key, or, on /v3/public/*, x-client-id plus an allowed Origin.',
      },
      components: {
        securitySchemes: {
          machineToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /v3/oauth/token' },
          dashboardJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /v3/auth/login' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Company API key, with a dashboard JWT' },
          publicClientId: { type: 'apiKey', in: 'header', name: 'x-client-id', description: 'Public client id; the Origin must be an Allowed Domain' },
          calendarSelectionToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /v3/calendar/selectionSession; list, select and disconnect of its own connection only' },
          manageToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The token of a customer\'s manage link (PUBLIC_BASE_URL/manage/<token>, sent in the booking emails); /v3/manage/* of its own appointment only' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
}
