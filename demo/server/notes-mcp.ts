/**
 * The demo's MCP server: a small notes store built with the official MCP SDK, on a port
 * of its own on 127.0.0.1 that requires a bearer token made at start. The page never sees
 * the token: it reaches the store through the proxy's `/mcp/notes` route, which adds it.
 * Node only; imports carry `.js` for Vite's config loader.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createProxyHandler, toNodeListener } from '../../src/proxy.js';

/** Where the demo's servers mount the notes route; the page's MCP url is `${MCP_PATH}/notes`. */
export const MCP_PATH = '/mcp';

/** The notes MCP server behind its proxy route. */
export interface NotesMcp {
  /** A Node listener that is also Connect middleware; mount it at {@link MCP_PATH}. */
  readonly listener: (
    req: IncomingMessage,
    res: ServerResponse,
    next?: (error?: unknown) => void,
  ) => void;
  close(): Promise<void>;
}

interface Note {
  readonly title: string;
  readonly text: string;
}

/** Starts the notes server (its notes live as long as it does) and the proxy route in front of it. */
export async function startNotesMcp(): Promise<NotesMcp> {
  const token = randomBytes(24).toString('hex');
  const notes = new Map<string, Note>([
    ['welcome', { title: 'welcome', text: 'This note comes from the demo MCP server.' }],
  ]);
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const http = createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end();
      return;
    }
    try {
      const sessionId = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (typeof sessionId === 'string') {
          res.writeHead(404).end();
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await notesServer(notes).connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  const proxy = createProxyHandler({
    // The notes route only: the model has its own endpoint.
    upstream: 'http://127.0.0.1:9/v1',
    apiKey: 'unused-the-notes-route-has-no-model',
    allowAnonymous: true,
    logger: () => {},
    mcpPath: MCP_PATH,
    // Every visitor of the local demo is the one anonymous user; reloads reconnect often.
    limits: { requestsPerMinute: 600 },
    mcp: {
      notes: {
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { Authorization: `Bearer ${token}` },
        // The proxy lists and forwards only these, whatever the page asks for.
        allowedTools: ['list_notes', 'read_note', 'add_note'],
      },
    },
  });
  return {
    listener: toNodeListener(proxy),
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** One session's server over the shared notes. */
function notesServer(notes: Map<string, Note>): McpServer {
  const server = new McpServer({ name: 'airlock-demo-notes', version: '1.0.0' });
  server.registerTool(
    'list_notes',
    {
      description: 'Lists the titles of the stored notes.',
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    async () => ({
      content: [{ type: 'text', text: [...notes.keys()].join('\n') || '(no notes)' }],
    }),
  );
  server.registerTool(
    'read_note',
    {
      description: 'Reads the note with this title.',
      inputSchema: { title: z.string().min(1).max(100) },
      annotations: { readOnlyHint: true },
    },
    async ({ title }) => {
      const note = notes.get(title);
      return note
        ? { content: [{ type: 'text', text: note.text }] }
        : { content: [{ type: 'text', text: `No note "${title}".` }], isError: true };
    },
  );
  server.registerTool(
    'add_note',
    {
      description: 'Stores a note under a title (replacing one of the same title).',
      inputSchema: { title: z.string().min(1).max(100), text: z.string().max(2_000) },
      annotations: { readOnlyHint: false },
    },
    async ({ title, text }) => {
      if (notes.size >= 100 && !notes.has(title)) {
        return {
          content: [{ type: 'text', text: 'The demo keeps 100 notes at most.' }],
          isError: true,
        };
      }
      notes.set(title, { title, text });
      return { content: [{ type: 'text', text: `Saved "${title}".` }] };
    },
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw new Error('too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
