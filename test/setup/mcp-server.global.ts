import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { startMcpTestServer } from './mcp-test-server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Origin of the MCP test server (`/mcp?t=<tenant>`, `/control/<tenant>/…`). */
    mcpServerUrl: string;
    /** An address where nothing listens: an MCP server that is down. */
    mcpDownUrl: string;
  }
}

/** One MCP test server (official SDK) for the whole run; tests keep apart by tenant. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startMcpTestServer();
  project.provide('mcpServerUrl', server.url);
  project.provide('mcpDownUrl', `${await freePort()}/mcp`);
  return () => server.close();
}

/** An origin on a port that was free a moment ago (nothing listens there once it is closed). */
async function freePort(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
