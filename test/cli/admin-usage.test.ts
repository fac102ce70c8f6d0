// The operator CLI's arguments: --help for every command, one readable line for a mistake (the
// API's error body with --json), documented exit codes, and never a stack trace for a wrong option.
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminHelp, EXIT_CODES, formatAdminError, parseAdminArgs, UsageError } from '../../src/cli/admin.js';
import { ApiError, fieldError } from '../../src/platform/errors.js';
import { ADMIN_COMMAND } from '../helpers/entry-points.js';

const run = (...args: string[]) => spawnSync(process.execPath, [...ADMIN_COMMAND, ...args], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'test' } });

test('--help, -h and help <command> describe each command without opening a database', () => {
  for (const command of ['create-company', 'suspend', 'reinstate', 'list', 'migrate']) {
    const parsed = parseAdminArgs([command, '--help']);
    assert.equal(parsed.command, command);
    assert.deepEqual({ ...parsed.values }, { help: true });
    assert.deepEqual(parseAdminArgs(['help', command]).values.help, true);
    const text = adminHelp(command);
    assert.match(text, new RegExp(`^usage: npm run admin -- ${command}`));
    assert.match(text, /Exit codes: 0 done; 1 refused .*; 2 wrong usage; 3 failed/);
  }
  assert.equal(parseAdminArgs(['-h']).values.help, true);
  for (const command of ['create-company', 'suspend', 'reinstate', 'list', 'migrate']) assert.match(adminHelp(), new RegExp(`\\n  ${command}`));
});

test('mistakes are UsageErrors with a one-line reason', () => {
  const reasons: Array<[string[], RegExp]> = [
    [[], /^no command given$/],
    [['frobnicate'], /^unknown command "frobnicate" \(commands: create-company, suspend, reinstate, list, migrate\)$/],
    [['create-company', '--nme', 'x'], /^unknown option --nme$/],
    [['suspend', '--company'], /^--company needs a value$/],
    [['list', '--company', 'x'], /^list does not take --company$/],
    [['list', 'extra'], /^list takes no argument "extra"$/],
  ];
  for (const [argv, reason] of reasons) {
    assert.throws(() => parseAdminArgs(argv), (error: Error) => error instanceof UsageError && reason.test(error.message), argv.join(' '));
  }
});

test('errors print as one line, or as the API\'s error body with --json, with their exit code', () => {
  const usage = formatAdminError(new UsageError('unknown option --nme'), false);
  assert.equal(usage.exitCode, EXIT_CODES.usage);
  assert.match(usage.text, /^error: unknown option --nme\nRun `npm run admin -- --help`/);
  const refused = new ApiError(400, 'Validation Error', [fieldError('body', 'name', 'name is required')]);
  assert.deepEqual(formatAdminError(refused, false), { text: 'error: Validation Error; name is required', exitCode: EXIT_CODES.refused });
  assert.deepEqual(JSON.parse(formatAdminError(refused, true).text), { success: false, message: 'Validation Error', errors: [{ type: 'field', location: 'body', path: 'name', msg: 'name is required' }] });
  const failed = formatAdminError(new Error('connect ECONNREFUSED 127.0.0.1:5432'), false);
  assert.deepEqual(failed, { text: 'error: connect ECONNREFUSED 127.0.0.1:5432', exitCode: EXIT_CODES.failed });
});

test('the real command: --help exits 0; a wrong option exits 2 with one line and no stack trace', () => {
  const help = run('suspend', '--help');
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: npm run admin -- suspend --company <company id>/);
  const wrong = run('create-company', '--nme', 'Acme', '--json');
  assert.equal(wrong.status, 2);
  assert.deepEqual(JSON.parse(wrong.stderr.trim()), { success: false, message: 'unknown option --nme', errors: [] });
  assert.doesNotMatch(wrong.stderr, /\n\s+at /);
});
