/**
 * What a tool can reach from where it runs: its origin, IndexedDB and the app's own
 * server. The headline tool reports it, so the demo shows the iframe tier's isolation
 * instead of only claiming it.
 */

/** What {@link probeIsolation} found, in words. */
export interface IsolationReport {
  /** `"null"` in the iframe tier: an opaque origin. */
  readonly origin: string;
  readonly indexedDB: string;
  readonly appServer: string;
}

/** Probes this worker's reach. `appUrl` is a URL on the app's server, e.g. the tool's own module. */
export async function probeIsolation(appUrl: string): Promise<IsolationReport> {
  return {
    origin: self.origin,
    indexedDB: await probeIndexedDb(),
    appServer: await probeFetch(appUrl),
  };
}

/** Opens (then deletes) a database, reporting how that went rather than throwing. */
async function probeIndexedDb(): Promise<string> {
  const name = 'airlock-demo-probe';
  try {
    const request = indexedDB.open(name);
    return await new Promise<string>((resolve) => {
      request.onsuccess = () => {
        request.result.close();
        indexedDB.deleteDatabase(name);
        resolve('opened (reachable)');
      };
      request.onerror = () => resolve(`blocked (${request.error?.name ?? 'error'})`);
    });
  } catch (error) {
    return `blocked (${error instanceof Error ? error.name : String(error)})`;
  }
}

async function probeFetch(url: string): Promise<string> {
  try {
    const response = await fetch(url, { method: 'HEAD' });
    await response.body?.cancel();
    return `reachable (HTTP ${response.status})`;
  } catch {
    // The sandbox's CSP (`connect-src` from `allowedOrigins`) refuses the request.
    return 'unreachable (connect-src blocks it)';
  }
}
