/** Types of scripts/build.mjs, for the TypeScript that imports it (the benchmarks). */
export declare const ROOT: string;
export declare const SERVICE_ENTRY_POINTS: string[];
/** V8 settings the server runs with (npm start, docs/operations.md, benchmarks). */
export declare const SERVER_NODE_FLAGS: string[];
/** Environment variables the server runs with beside them (glibc malloc arenas). */
export declare const SERVER_ENVIRONMENT: { MALLOC_ARENA_MAX: string };
/** The service as `npm start` runs it: builds dist/ and returns the path of dist/server.js. */
export declare function buildService(): Promise<string>;
export declare function buildBundles(options: { entryPoints: string[]; outdir: string; outbase?: string; splitting?: boolean; sourcemap?: boolean }): Promise<void>;
export declare function buildSuiteBundle(options: { files: string[]; outdir: string; afterEachFile?: { module: string; name: string }; sourcemap?: boolean }): Promise<void>;
