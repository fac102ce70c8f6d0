import type { App } from './types.js';

export interface RegisteredRoute {
  method: string;
  url: string;
  hidden: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    registeredRoutes: RegisteredRoute[];
  }
}

/** Headers on every answer: the request id and the usual protections. */
export function registerStandardHeaders(app: App): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    // The usual headers on every answer: no MIME sniffing, no framing (older browsers read
    // X-Frame-Options; CSP frame-ancestors is set on the /docs page), no referrer leaks.
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });
}

/** Every route as registered, so a test can prove /openapi.json describes them all. */
export function registerRouteRegistry(app: App): void {
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method, url: route.url, hidden: route.schema?.hide === true });
  });
  app.decorate('registeredRoutes', routes);
}
