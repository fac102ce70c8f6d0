import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The pages this module serves, each an entry of web/ bundled on its own. */
export const PAGES = ['booking', 'manage'] as const;
export type PageName = (typeof PAGES)[number];

const entries: Record<PageName, string> = {
  booking: fileURLToPath(new URL('../../../web/booking/main.tsx', import.meta.url)),
  manage: fileURLToPath(new URL('../../../web/manage/main.tsx', import.meta.url)),
};
const embedEntry = fileURLToPath(new URL('../../../web/embed/embed.ts', import.meta.url));

export interface PageBundle {
  js: string;
  css: string;
}

export type PageBundles = Record<PageName, PageBundle> & {
  /** /book/embed.js: the script other sites include, a classic script (document.currentScript needs one). */
  embed: string;
};

/**
 * web/booking, web/manage and web/embed bundled in memory by esbuild at start, so `npm start`
 * serves the pages with no build step. The pages are one build with two entry points: each page is
 * one script and one stylesheet of its own (no shared chunks to route), and a visitor of one page
 * never downloads the other's code; the slot picker and the styles are simply in both. The embed
 * script is a build of its own, an IIFE.
 */
export async function buildPageBundles(): Promise<PageBundles> {
  const common = { bundle: true, write: false, target: 'es2020', minify: true, logLevel: 'silent' } as const;
  const [pages, embed] = await Promise.all([
    build({
      ...common,
      entryPoints: entries,
      outdir: 'out',
      format: 'esm',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      loader: { '.css': 'css' },
    }),
    build({ ...common, entryPoints: [embedEntry], outfile: 'embed.js', format: 'iife' }),
  ]);
  const text = (name: string) => pages.outputFiles.find((file) => file.path.endsWith(`/out/${name}`))?.text ?? '';
  const bundles = Object.fromEntries(PAGES.map((page) => [page, { js: text(`${page}.js`), css: text(`${page}.css`) }])) as Record<PageName, PageBundle>;
  return { ...bundles, embed: embed.outputFiles[0]?.text ?? '' };
}
