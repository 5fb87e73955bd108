/** Where each demo tool runs, shown on its card: the point of the demo is that it differs. */
const TIERS: Readonly<Record<string, string>> = {
  set_theme: 'page',
  get_weather: 'sandbox worker',
  calculate: 'sandbox worker',
  slow_report: 'sandbox worker',
  fetch_headline: 'iframe sandbox',
  run_js: 'QuickJS in an iframe sandbox',
  save_memory: 'agent worker',
  recall_memories: 'agent worker',
  forget_memory: 'agent worker',
};

/** Where `toolName` runs, or `undefined` for a tool the demo does not define. */
export function tierOf(toolName: string): string | undefined {
  // MCP tools are named `<server>__<tool>`: they run on that server, reached through the proxy.
  if (toolName.includes('__')) return 'MCP server';
  return TIERS[toolName];
}
