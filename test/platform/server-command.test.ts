// The server's V8 settings and environment (scripts/build.mjs SERVER_NODE_FLAGS and
// SERVER_ENVIRONMENT, issue 18's memory aim) are the same wherever the production command line is
// written: npm start, the systemd unit and the Dockerfile of docs/operations.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS } from '../../scripts/build.mjs';

const root = new URL('../../', import.meta.url);

const assignments = Object.entries(SERVER_ENVIRONMENT).map(([name, value]) => `${name}=${value}`);

test('npm start builds, then becomes dist/server.js run with SERVER_NODE_FLAGS and SERVER_ENVIRONMENT', () => {
  const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts;
  // `exec`: npm's shell gives way to the server, so a SIGTERM sent to npm start reaches it; an
  // assignment before it is in the server's environment.
  assert.equal(scripts.start, `node scripts/build.mjs && ${assignments.join(' ')} exec node ${SERVER_NODE_FLAGS.join(' ')} dist/server.js`);
});

test('the systemd unit and the Dockerfile of docs/operations.md run the built server with the same flags', () => {
  const operations = readFileSync(new URL('docs/operations.md', root), 'utf8');
  assert.ok(operations.includes(`ExecStart=/usr/bin/node ${SERVER_NODE_FLAGS.join(' ')} dist/server.js`), 'systemd ExecStart');
  assert.ok(operations.includes(`CMD ${JSON.stringify(['node', ...SERVER_NODE_FLAGS, 'dist/server.js']).replaceAll('","', '", "')}`), 'Dockerfile CMD');
  for (const assignment of assignments) {
    assert.ok(operations.includes(`Environment=${assignment}\n`), `systemd Environment=${assignment}`);
    assert.match(operations, new RegExp(`^ENV NODE_ENV=production .*\\b${assignment}$`, 'm'), `Dockerfile ENV ${assignment}`);
  }
});
