// express ships no types and @types/express is not installed: the few parts the MCP OAuth test
// server (test/setup/mcp-oauth-server.ts) uses, typed here. The SDK's auth router is express's.
declare module 'express' {
  import type { IncomingMessage, Server, ServerResponse } from 'node:http';
  import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';

  export interface Request extends IncomingMessage {
    body?: unknown;
    auth?: AuthInfo;
  }
  export interface Response extends ServerResponse {
    req: Request;
    json(value: unknown): Response;
    status(code: number): Response;
    set(name: string, value: string): Response;
    type(type: string): Response;
    send(body: string): Response;
    redirect(url: string): void;
  }
  export type RequestHandler = (
    request: Request,
    response: Response,
    next: (error?: unknown) => void,
  ) => void;
  type Handler = (request: Request, response: Response, next: (error?: unknown) => void) => unknown;
  export interface Express {
    use(...handlers: Handler[]): void;
    get(path: string, ...handlers: Handler[]): void;
    post(path: string, ...handlers: Handler[]): void;
    all(path: string, ...handlers: Handler[]): void;
    listen(port: number, host: string, callback: () => void): Server;
  }
  interface ExpressStatic {
    (): Express;
    json(): RequestHandler;
    urlencoded(options?: unknown): RequestHandler;
  }
  const express: ExpressStatic;
  export default express;
}
