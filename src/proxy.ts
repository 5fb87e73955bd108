/**
 * `airlock-agents/proxy`: the key-safe model gateway, server side only. The page's agent
 * points its `model.baseURL` here; the proxy checks who calls (`authorize`), what they ask
 * for (a per-route request policy) and how much they may spend (per-user limits), adds the
 * API key from the server environment, and redacts it from everything it returns.
 */

// The same price type `createAgent`'s `prices` takes, so one table can serve both.
export type { ModelPrice } from './protocol/budgets.js';
export { PROXY_ERROR_HEADER } from './protocol/proxy-refusals.js';
export type { Authorize, ProxyCaller } from './proxy/authorize.js';
export type {
  ClaimWindows,
  CounterClaim,
  CounterReservation,
  CounterStore,
  InFlightClaim,
  MemoryCounterStore,
  ReserveOutcome,
  WindowClaim,
} from './proxy/counter-store.js';
export { claimWindows, createMemoryCounterStore } from './proxy/counter-store.js';
export type { ProxyHandler } from './proxy/create-proxy-handler.js';
export { createProxyHandler } from './proxy/create-proxy-handler.js';
export type { ProxyErrorBody, ProxyErrorCode } from './proxy/error-response.js';
export type { McpAuthStore } from './proxy/mcp-auth-store.js';
export { createMemoryMcpAuthStore } from './proxy/mcp-auth-store.js';
export type { McpOAuth } from './proxy/mcp-oauth-options.js';
export type { McpUpstream } from './proxy/mcp-upstreams.js';
export type { NodeListener } from './proxy/node-adapter.js';
export { toNodeListener } from './proxy/node-adapter.js';
export { createNodeHandler } from './proxy/node-handler.js';
export type {
  ProxyLogger,
  ProxyOptions,
  ProxyPath,
  RequestPolicyOptions,
} from './proxy/proxy-options.js';
export { DEFAULT_ALLOWED_MODELS, DEFAULT_LIMITS } from './proxy/proxy-options.js';
export type {
  RedisCounterStoreOptions,
  RedisScriptClient,
} from './proxy/redis-counter-store.js';
export { CounterStoreError, createRedisCounterStore } from './proxy/redis-counter-store.js';
export type { RedisEvalClient, RedisMcpAuthStoreOptions } from './proxy/redis-mcp-auth-store.js';
export { createRedisMcpAuthStore } from './proxy/redis-mcp-auth-store.js';
export type { ProxyRefusal, RefusalListener } from './proxy/refusal-log.js';
export { formatRefusal } from './proxy/refusal-log.js';
export type { SpendLimits } from './proxy/spend-limits.js';
export { airlockProxy } from './proxy/vite-plugin.js';
