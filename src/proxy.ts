/**
 * `airlock-agents/proxy`: the key-safe model proxy, server side only. The page's agent points its
 * `model.baseURL` here; the proxy checks each request and adds the API key from the
 * server environment, so neither the page nor the agent worker ever holds it.
 */
export type { ProxyHandler } from './proxy/create-proxy-handler.js';
export { createProxyHandler } from './proxy/create-proxy-handler.js';
export type { ProxyErrorBody, ProxyErrorCode } from './proxy/error-response.js';
export type { NodeListener } from './proxy/node-adapter.js';
export { toNodeListener } from './proxy/node-adapter.js';
export type { ProxyOptions, ProxyPath } from './proxy/proxy-options.js';
export { airlockProxy } from './proxy/vite-plugin.js';
