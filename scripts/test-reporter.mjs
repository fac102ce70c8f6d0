// Node's spec reporter, with the place of each test mapped back to its TypeScript source. The suite
// runs from one bundle (scripts/build.mjs buildSuiteBundle), so the runner's own "test at" line of a
// failure would name suite.cjs and a line in it; through the bundle's source map it names the test
// file and line, as when each file ran from a file of its own. Only the places of reported events
// are mapped (the map is read once, on the first event from the bundle): no cost in a test process.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { spec as Spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const maps = new Map();
function sourceMapOf(file) {
  if (!maps.has(file)) {
    const mapFile = `${file}.map`;
    let map;
    try {
      map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined;
    } catch {
      map = undefined;
    }
    maps.set(file, map);
  }
  return maps.get(file);
}

function mapPlace(data) {
  if (!data || typeof data.file !== 'string' || !data.file.endsWith('.cjs') || !data.line || !data.column) return data;
  const entry = sourceMapOf(data.file)?.findEntry(data.line - 1, data.column - 1);
  if (!entry || !entry.originalSource) return data;
  const source = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(dirname(data.file), entry.originalSource);
  return { ...data, file: source, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
}

export default async function* slotwiseReporter(source) {
  const mapped = (async function* () {
    for await (const event of source) yield event && event.data ? { ...event, data: mapPlace(event.data) } : event;
  })();
  yield* Readable.from(mapped).pipe(new Spec());
}
