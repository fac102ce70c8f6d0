#!/usr/bin/env node
// Compiles the TypeScript to JavaScript bundles with esbuild, so that processes run plain `node`
// instead of transforming every module through tsx at start (issue 18: memory and start time).
//
//   node scripts/build.mjs            the service: dist/server.js and dist/cli/admin-main.js
//                                     (`npm start` runs this first, then `node dist/server.js`)
//   import { buildBundles } from ...  the test runner builds the test files the same way
//
// Bundling our modules together with their npm dependencies matters as much as dropping tsx:
// importing the app from node_modules' few hundred files takes about 0.7 s, from one bundle 0.26 s.
// Only esbuild type-strips: `npm run typecheck` is what checks types.
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Left to node_modules at run time: packages that find files of their own through their own
 * location (PGlite's WebAssembly and data, esbuild's binary, the argon2 native addon, Swagger UI's
 * assets, pg's optional native driver), and the test-only tools.
 */
const EXTERNAL = ['@electric-sql/pglite', 'esbuild', '@node-rs/argon2', 'swagger-ui-dist', 'pg-native', 'playwright-core', 'axe-core', 'typescript', 'tsx'];

/**
 * Our modules find files beside them (migrations, the booking page's sources, fixtures) from
 * `import.meta.url`, which in a bundle would be the bundle's own address. Each source file's
 * `import.meta.url` is therefore fixed to that file's address in the checkout: a build serves the
 * checkout it was built from (`npm start` builds each time).
 */
// Patterns, not strings: spelled out, the words would themselves be rewritten when a test bundles this file.
const IMPORT_META_URL = /\bimport\.meta\.url\b/;
const IMPORT_META_URL_ALL = /\bimport\.meta\.url\b/g;
const sourceAddresses = {
  name: 'source-addresses',
  setup(builder) {
    builder.onLoad({ filter: /\.(ts|tsx|mts|mjs|js)$/ }, (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!IMPORT_META_URL.test(text)) return undefined;
      const loader = args.path.endsWith('.tsx') ? 'tsx' : /\.m?ts$/.test(args.path) ? 'ts' : 'js';
      return { contents: text.replace(IMPORT_META_URL_ALL, JSON.stringify(pathToFileURL(args.path).href)), loader };
    });
  },
};

/**
 * CommonJS dependencies inside an ES module bundle call `require` for Node's own modules and the
 * externals; a real one, made from the bundle's address, answers them.
 */
// (Spelled in two parts for the same reason as IMPORT_META_URL.)
const REQUIRE_BANNER = `import { createRequire as __slotwiseCreateRequire } from 'node:module'; const require = __slotwiseCreateRequire(${'import.meta'}.url);`;

/**
 * Bundles `entryPoints` (paths relative to the project root) into `outdir`, keeping their folders
 * (`src/server.ts` becomes `<outdir>/src/server.js` with outbase '.'). With several entry points the
 * code they share goes into chunks, loaded once per process.
 */
export async function buildBundles({ entryPoints, outdir, outbase = ROOT, splitting = entryPoints.length > 1, sourcemap = true }) {
  await bundle({ entryPoints, outdir, outbase, splitting, sourcemap, format: 'esm' });
}

/**
 * The test suite as one CommonJS bundle, `<outdir>/suite.cjs`, for running many test files in one
 * process (scripts/run-tests.mjs, scripts/test-shard.mjs). It exports `files`: for each test file
 * (path relative to the project root), a function that runs the file's module body. esbuild wraps
 * every module reached through `require` in a lazy initializer, so a test file's top-level code runs
 * only when its function is called, synchronously; node:test attaches the `test`, `before` and
 * `after` it calls to the suite that is running then (the file's own `describe`), by async context.
 * An ES module bundle would need `import()`, whose module body runs outside that context, so its
 * tests would attach to the root. The code that files share (the app, the helpers) is loaded once
 * per process. A module in it cannot use top-level await.
 */
export async function buildSuiteBundle({ files, outdir, afterEachFile, sourcemap = true }) {
  const requirePath = (file) => JSON.stringify(`./${file.split(sep).join('/')}`);
  let entry = `exports.files = {\n${files.map((file) => `  ${JSON.stringify(file)}: () => require(${requirePath(file)}),`).join('\n')}\n};\n`;
  // `afterEachFile: { module, name }`: exported as `afterEachFile`, for the runner to call when a file ends.
  if (afterEachFile) entry += `exports.afterEachFile = () => require(${requirePath(afterEachFile.module)})[${JSON.stringify(afterEachFile.name)}]();\n`;
  const suiteEntry = {
    name: 'suite-entry',
    setup(builder) {
      builder.onResolve({ filter: /^slotwise-suite-entry$/ }, () => ({ path: 'suite-entry', namespace: 'slotwise-suite' }));
      builder.onLoad({ filter: /.*/, namespace: 'slotwise-suite' }, () => ({ contents: entry, loader: 'js', resolveDir: ROOT }));
    },
  };
  await bundle({ entryPoints: [{ in: 'slotwise-suite-entry', out: 'suite' }], outdir, outbase: ROOT, splitting: false, sourcemap, format: 'cjs', plugins: [suiteEntry] });
}

async function bundle({ entryPoints, outdir: requestedOutdir, outbase, splitting, sourcemap, format, plugins = [] }) {
  // The folder is replaced as a whole: it must be a folder of the project's own, never the project.
  const outdir = resolve(ROOT, requestedOutdir);
  const inside = relative(ROOT, outdir);
  if (!inside || inside.startsWith('..') || isAbsolute(inside)) throw new Error(`build: ${outdir} is not a folder inside ${ROOT}`);
  const result = await build({
    write: false,
    absWorkingDir: ROOT,
    entryPoints,
    outdir,
    outbase,
    bundle: true,
    splitting,
    format,
    // In a package of "type": "module", Node reads a .js file as an ES module.
    ...(format === 'cjs' ? { outExtension: { '.js': '.cjs' } } : { banner: { js: REQUIRE_BANNER } }),
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    plugins: [sourceAddresses, ...plugins],
    // Linked maps: `node --enable-source-maps` shows stack traces in the TypeScript sources.
    sourcemap: sourcemap ? 'linked' : false,
    // Function and class names stay as written: logs, errors and tests read them.
    keepNames: true,
    // V8 keeps each script's source in memory, two bytes a character if a single character is not
    // Latin-1: ASCII output (non-ASCII escaped, licence comments moved to a .LEGAL.txt file beside
    // the bundle) and no whitespace halve what that costs (15 MB for the server before).
    charset: 'ascii',
    legalComments: 'external',
    minifyWhitespace: true,
    logLevel: 'warning',
    // Handlebars' CommonJS entry assigns require.extensions: harmless, and not ours to change.
    logOverride: { 'unsupported-require-call': 'silent' },
  });
  // Written beside, then put in place with two renames: a process starting from the folder
  // meanwhile finds the old build or the new one, not a half-written one, and no chunk of an
  // earlier build is left beside the new ones.
  const partial = `${outdir}.partial-${process.pid}-${Date.now()}`;
  for (const file of result.outputFiles) {
    const path = join(partial, relative(outdir, file.path));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, /\.c?js$/.test(file.path) ? asciiOnly(file.text, file.path) : file.contents);
  }
  const previous = `${outdir}.old-${process.pid}-${Date.now()}`;
  if (existsSync(outdir)) renameSync(outdir, previous);
  renameSync(partial, outdir);
  rmSync(previous, { recursive: true, force: true });
}

/**
 * esbuild's ASCII output still leaves non-ASCII characters raw in some regular expression literals
 * (a dependency's word-splitting patterns, `/pok[eé]mon$/i`): each becomes \uXXXX, which in a
 * string or a regular expression means the same character. Two cases where it would not are
 * refused instead of changed: a character already escaped by a backslash (`/\é/`), and a tagged
 * template (String.raw keeps `\u00e9` as six characters), which this cannot tell apart, so a
 * character on a line that has a backtick fails the build too. (The source map's columns after an
 * escaped character on its line are off by the added characters.)
 */
function asciiOnly(text, path) {
  return text.replace(/[\u0080-\uffff]/g, (character, offset) => {
    const lineStart = text.lastIndexOf('\n', offset) + 1;
    const lineEnd = text.indexOf('\n', offset);
    const line = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd);
    if (text[offset - 1] === '\\' || /`/.test(line.slice(Math.max(0, offset - lineStart - 200), offset - lineStart + 200))) {
      throw new Error(`build: ${path} has a non-ASCII character that cannot be escaped safely, near: ${line.slice(Math.max(0, offset - lineStart - 60), offset - lineStart + 20)}`);
    }
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/**
 * V8 settings of the server process (`npm start`, docs/operations.md, the benchmarks): a young
 * generation of at most 2 x 8 MB instead of 2 x 16 MB, and an old generation that grows by 15 %
 * past what the last collection kept instead of V8's default factor (up to 4x). Through bench:load
 * the instance then stays under 200 MB resident (191 MB at the end, peak 198 MB, against 353 / 404
 * MB) for about 8 % fewer requests per second. --optimize-for-size held 162 MB but halved the
 * throughput (docs/performance.md, issue 18).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=15'];

/**
 * Environment of the server process, beside the V8 settings: glibc's malloc keeps an arena per
 * thread that allocates (up to 8 per core), and the libuv thread pool (zlib compressing cached
 * availability answers, crypto) left freed memory in arenas of their own. Two arenas took bench:load's
 * peak from 200-205 MB resident to 182-184 MB with no fewer requests per second (docs/performance.md,
 * "Issue 18, fifth pass"). Ignored where the C library is not glibc.
 */
export const SERVER_ENVIRONMENT = { MALLOC_ARENA_MAX: '2' };

/** The service's entry points, built into dist/ by `npm start` and `npm run build`. */
export const SERVICE_ENTRY_POINTS = ['src/server.ts', 'src/cli/admin-main.ts'];

/** The service as `npm start` runs it: builds dist/ and returns the path of dist/server.js. */
export async function buildService() {
  const outdir = join(ROOT, 'dist');
  await buildBundles({ entryPoints: SERVICE_ENTRY_POINTS, outdir, outbase: join(ROOT, 'src') });
  return join(outdir, 'server.js');
}

// realpath: run through a symbolic link, argv[1] names the link and import.meta.url the file.
// No top-level await: the test suite's CommonJS bundle (buildSuiteBundle) includes this module.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const started = performance.now();
  buildService().then(
    () => console.error(`built ${SERVICE_ENTRY_POINTS.join(', ')} into ${relative(process.cwd(), join(ROOT, 'dist')) || '.'}${sep} in ${Math.round(performance.now() - started)} ms`),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

