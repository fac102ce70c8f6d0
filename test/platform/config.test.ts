import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, SECRET_NAMES, loadConfig } from '../../src/platform/config.js';

const SECRET = (label: string) => `${label}-secret-0123456789abcdef0123456789abcdef`;
const ALL_SECRETS = Object.fromEntries(SECRET_NAMES.map((name) => [name, SECRET(name.toLowerCase())]));

/** Asserts that `load` throws a ConfigError whose message contains every fragment. */
function throwsConfigError(load: () => unknown, ...fragments: string[]) {
  assert.throws(load, (error: unknown) => {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    for (const fragment of fragments) assert.ok(error.message.includes(fragment), `"${error.message}" does not name ${fragment}`);
    return true;
  });
}

describe('loadConfig', () => {
  test('an empty environment gives the defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.dataDir, './data');
    assert.equal(config.embeddedUpkeepSeconds, 10);
    assert.equal(config.nodeEnv, 'development');
    assert.equal(config.isProduction, false);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.oidc, undefined);
    assert.deepEqual(config.secrets, {});
    assert.equal(config.signupEnabled, true);
    assert.ok(config.bodyLimitBytes > 0);
  });

  test('values from the environment are read', () => {
    const config = loadConfig({
      PORT: '8080',
      DATA_DIR: '/var/lib/slotwise',
      EMBEDDED_UPKEEP_SECONDS: '0',
      DATABASE_URL: 'postgres://db/slotwise',
      BODY_LIMIT_BYTES: '2048',
      SIGNUP_ENABLED: 'false',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.dataDir, '/var/lib/slotwise');
    assert.equal(config.embeddedUpkeepSeconds, 0, '0 turns the embedded upkeep off');
    assert.equal(config.databaseUrl, 'postgres://db/slotwise');
    assert.equal(config.bodyLimitBytes, 2048);
    assert.equal(config.signupEnabled, false);
  });

  test('NODE_ENV=production without secrets throws a ConfigError naming every missing secret', () => {
    throwsConfigError(() => loadConfig({ NODE_ENV: 'production' }), ...SECRET_NAMES);
  });

  test('NODE_ENV=production names only the secrets that are missing', () => {
    const [first, ...rest] = SECRET_NAMES;
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', [first]: SECRET('given') }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.ok(!error.message.includes(first), error.message);
        for (const name of rest) assert.ok(error.message.includes(name), error.message);
        return true;
      },
    );
  });

  test('NODE_ENV=production with every secret passes and keeps them', () => {
    const config = loadConfig({ NODE_ENV: 'production', ...ALL_SECRETS });
    assert.equal(config.isProduction, true);
    assert.deepEqual(config.secrets, ALL_SECRETS);
  });

  test('a secret shorter than 32 characters throws, in any environment', () => {
    for (const name of SECRET_NAMES) {
      throwsConfigError(() => loadConfig({ [name]: 'x'.repeat(31) }), name);
      throwsConfigError(() => loadConfig({ NODE_ENV: 'production', ...ALL_SECRETS, [name]: 'short' }), name);
    }
    assert.equal(loadConfig({ AUTH_TOKEN_SECRET: 'x'.repeat(32) }).secrets.AUTH_TOKEN_SECRET, 'x'.repeat(32));
  });

  test('a bad PORT throws', () => {
    for (const port of ['abc', '-1', '65536', '80.5', '3000x']) {
      throwsConfigError(() => loadConfig({ PORT: port }), 'PORT');
    }
  });

  test('other bad numbers and booleans throw', () => {
    throwsConfigError(() => loadConfig({ BODY_LIMIT_BYTES: 'lots' }), 'BODY_LIMIT_BYTES');
    throwsConfigError(() => loadConfig({ SIGNUP_ENABLED: 'maybe' }), 'SIGNUP_ENABLED');
    throwsConfigError(() => loadConfig({ EMBEDDED_UPKEEP_SECONDS: '-1' }), 'EMBEDDED_UPKEEP_SECONDS');
  });

  test('OIDC_ISSUER without OIDC_JWKS_URL throws', () => {
    throwsConfigError(() => loadConfig({ OIDC_ISSUER: 'https://issuer.example.com', OIDC_AUDIENCE: 'slotwise' }), 'OIDC_JWKS_URL');
  });

  test('OIDC_ISSUER with OIDC_JWKS_URL and OIDC_AUDIENCE configures the external issuer', () => {
    const config = loadConfig({
      OIDC_ISSUER: 'https://issuer.example.com',
      OIDC_JWKS_URL: 'https://issuer.example.com/.well-known/jwks.json',
      OIDC_AUDIENCE: 'slotwise',
    });
    assert.deepEqual(config.oidc, {
      issuer: 'https://issuer.example.com',
      jwksUrl: 'https://issuer.example.com/.well-known/jwks.json',
      audience: 'slotwise',
    });
  });
});
