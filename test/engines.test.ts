// `npm install` on Node 20 prints no EBADENGINE warning: every installed package accepts the oldest
// Node the project supports (package.json engines), which is what npm compares.
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import semver from 'semver';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string }; overrides?: Record<string, unknown> };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };

test('every package in the lock file accepts the oldest supported Node (no EBADENGINE)', () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;
  assert.equal(oldest, '20.19.0');
  const refusing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const wanted = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
    if (path && wanted && !semver.satisfies(oldest, wanted, { includePrerelease: true })) refusing.push(`${path} wants node ${wanted}`);
  }
  assert.deepEqual(refusing, []);
});

test('light-my-request gets cookie 1.x (Node 18+) instead of 2.x (Node 22+)', () => {
  assert.deepEqual(pkg.overrides?.['light-my-request'], { cookie: '^1.1.1' });
  const cookie = (lock.packages['node_modules/light-my-request/node_modules/cookie'] ?? lock.packages['node_modules/cookie']) as { version?: string } | undefined;
  assert.ok(cookie?.version?.startsWith('1.'), `cookie ${cookie?.version}`);
});
