import { AirlockError } from '../errors/airlock-error';
import { claimWorker } from '../runtime/claim-worker';
import { TabHub } from './tab-hub';

/**
 * Serves the tab hub from this `SharedWorker`: where the agent workers of the origin's tabs
 * relay their runs to each other's watches (`agent.watch`). Call it once from a SharedWorker
 * entry of the app's own, `import { serveTabs } from 'airlock-agents/tabs'; serveTabs();`,
 * and start it with `createAgent({ tabs: () => new SharedWorker(new URL('./tabs.worker.ts',
 * import.meta.url), { type: 'module', name: 'airlock-tabs' }) })`. Calls after the first do
 * nothing; a call outside a SharedWorker throws `invalid-usage`.
 */
export function serveTabs(): void {
  if (!('onconnect' in globalThis))
    throw new AirlockError(
      'invalid-usage',
      'serveTabs() serves the tab hub from a SharedWorker entry; this is not a SharedWorker.',
    );
  if (!claimWorker('tabs')) return;
  const hub = new TabHub(typeof navigator === 'undefined' ? undefined : navigator.locks);
  globalThis.addEventListener('connect', (event) => {
    for (const port of (event as MessageEvent).ports) hub.connect(port);
  });
}
