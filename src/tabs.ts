/**
 * What the tab hub's entry calls: a `SharedWorker` entry of the app's own, so bundlers see it:
 * `import { serveTabs } from 'airlock-agents/tabs'; serveTabs();`
 */
export { serveTabs } from './tabs/serve-tabs';
