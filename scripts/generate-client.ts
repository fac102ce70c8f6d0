// `npm run client:generate`: writes packages/client/src/schema.ts, the types of the @slotwise/client
// package, with openapi-typescript from the /openapi.json the app serves. The app is built in this
// process as the tests build it (test/helpers/app.ts) and asked for the document through inject:
// no server, no port. The document carries no per-run value (its `servers` entry is `/` unless
// PUBLIC_BASE_URL is set, and the test configuration never sets it), so the output is the same on
// every run; test/generated-client.test.ts fails when the checked-in file differs.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import type { OpenAPI3 } from 'openapi-typescript';

export const SCHEMA_PATH = fileURLToPath(new URL('../packages/client/src/schema.ts', import.meta.url));

const HEADER = `/**
 * GENERATED FILE, do not edit: \`npm run client:generate\` (scripts/generate-client.ts) writes it with
 * openapi-typescript from the /openapi.json the app serves. test/generated-client.test.ts fails when
 * it no longer matches the routes.
 */

`;

/** The text of packages/client/src/schema.ts for a served OpenAPI document. */
export async function renderClientSchema(document: unknown): Promise<string> {
  return HEADER + astToString(await openapiTS(document as OpenAPI3));
}

async function main(): Promise<void> {
  // Imported here so the test, which has an app of its own, loads only renderClientSchema.
  const { createTestContext, json } = await import('../test/helpers/app.js');
  const context = await createTestContext();
  try {
    const response = await context.app.inject({ method: 'GET', url: '/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}: ${response.body}`);
    writeFileSync(SCHEMA_PATH, await renderClientSchema(json(response)));
    console.log(`Wrote ${SCHEMA_PATH}`);
  } finally {
    await context.close();
  }
}

// No top-level await: test/generated-client.test.ts imports this module, and the suite's
// CommonJS bundle (scripts/build.mjs buildSuiteBundle) cannot hold one.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
