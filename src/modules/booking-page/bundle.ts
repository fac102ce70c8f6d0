import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const entry = fileURLToPath(new URL('../../../web/booking/main.tsx', import.meta.url));

export interface BookingBundle {
  js: string;
  css: string;
}

/** web/booking bundled in memory by esbuild at start, so `npm start` serves the page with no build step. */
export async function buildBookingBundle(): Promise<BookingBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'esm',
    target: 'es2020',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'css' },
    logLevel: 'silent',
  });
  const text = (ending: string) => result.outputFiles.find((file) => file.path.endsWith(ending))?.text ?? '';
  return { js: text('.js'), css: text('.css') };
}
