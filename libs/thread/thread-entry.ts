// Compiled, an entry is the .js file beside its caller. Under tsx (tests, benches) it is the .ts source,
// which a worker loads only once tsx's hooks are registered in that worker, before the import.
const TSX_API = import.meta.url.endsWith('.ts') ? import.meta.resolve('tsx/esm/api') : undefined;

/** The URL a Worker starts `file` (no extension) from, beside the module at `callerUrl` (its import.meta.url). */
export function threadEntry(callerUrl: string, file: string): URL {
  return TSX_API
    ? new URL(`data:text/javascript,${encodeURIComponent(`const { register } = await import(${JSON.stringify(TSX_API)}); register(); await import(${JSON.stringify(new URL(`./${file}.ts`, callerUrl).href)});`)}`)
    : new URL(`./${file}.js`, callerUrl);
}
