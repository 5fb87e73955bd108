import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { createProxyHandler, type ProxyOptions, toNodeListener } from '../../src/proxy';
import { startMcpModernServer } from './mcp-modern-server';
import { startMcpOAuthServer } from './mcp-oauth-server';
import { startMcpTestServer } from './mcp-test-server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Origin of the MCP test server (`/mcp?t=<tenant>`, `/control/<tenant>/…`). */
    mcpServerUrl: string;
    /** An address where nothing listens: an MCP server that is down. */
    mcpDownUrl: string;
    /**
     * The proxy route `/mcp/notes` of an Airlock proxy in front of the MCP test server's
     * `secret` tenant, which refuses requests without the credentials the proxy adds.
     */
    mcpProxyUrl: string;
    /** The MCP path (`/mcp`) of an Airlock proxy serving `oauth`: the MCP OAuth test server, with OAuth held by the proxy. */
    mcpOAuthProxyPath: string;
    /** Origin of the MCP OAuth test server (`GET /control/log`: the tokens it issued). */
    mcpOAuthServerUrl: string;
    /** Origin of the 2026-07-28 MCP test server (`/mcp?t=<tenant>`, `GET /control/<tenant>/log`). */
    mcpModernServerUrl: string;
    /**
     * The proxy route `/mcp/modern` of the same Airlock proxy as `mcpProxyUrl`, in front of the
     * 2026-07-28 test server's `secret` tenant (its log: `/control/secret/log`).
     */
    mcpModernProxyUrl: string;
  }
}

/** One MCP test server (official SDK) for the whole run; tests keep apart by tenant. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startMcpTestServer();
  project.provide('mcpServerUrl', server.url);
  const modernServer = await startMcpModernServer();
  project.provide('mcpModernServerUrl', modernServer.url);
  project.provide('mcpDownUrl', `${await freePort()}/mcp`);
  // The browser tests' MCP requests count as the one anonymous user's: not what they test.
  const proxy = await serveMcpProxy({
    notes: {
      url: `${server.url}/mcp?t=secret`,
      headers: { Authorization: 'Bearer upstream-secret' },
      // The tools the browser tests call through the proxy; any other tools/call is refused.
      allowedTools: ['echo', 'add', 'slow', 'flaky_stream'],
    },
    // The same policy for a server of the 2026-07-28 revision: its delete_everything is refused.
    modern: {
      url: `${modernServer.url}/mcp?t=secret`,
      headers: { Authorization: 'Bearer modern-secret' },
      allowedTools: ['echo', 'add', 'slow'],
    },
  });
  project.provide('mcpProxyUrl', `${proxy.origin}/mcp/notes`);
  project.provide('mcpModernProxyUrl', `${proxy.origin}/mcp/modern`);
  const oauthServer = await startMcpOAuthServer();
  const oauthProxy = await serveMcpProxy({
    oauth: {
      url: oauthServer.mcpUrl,
      allowedTools: ['whoami', 'echo_auth'],
      auth: { type: 'oauth' },
    },
  });
  project.provide('mcpOAuthProxyPath', `${oauthProxy.origin}/mcp`);
  project.provide('mcpOAuthServerUrl', oauthServer.url);
  return async () => {
    await oauthProxy.close();
    await oauthServer.close();
    await proxy.close();
    await modernServer.close();
    await server.close();
  };
}

/** An Airlock proxy (no model upstream) serving `mcp` on 127.0.0.1, with its origin. */
async function serveMcpProxy(
  mcp: NonNullable<ProxyOptions['mcp']>,
): Promise<{ origin: string; close: () => Promise<void> }> {
  const proxy = createServer(
    toNodeListener(
      createProxyHandler({
        upstream: 'http://127.0.0.1:9/v1',
        apiKey: 'sk-unused-by-the-mcp-tests',
        allowAnonymous: true,
        logger: () => {},
        allowedOrigins: '*',
        limits: { requestsPerMinute: 100_000 },
        mcp,
      }),
    ),
  );
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** An origin on a port that was free a moment ago (nothing listens there once it is closed). */
async function freePort(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
