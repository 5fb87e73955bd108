// @vitest-environment node
import type { Connect, Plugin, ViteDevServer } from 'vite';
import { describe, expect, it } from 'vitest';
import { tinyModelPlugin } from '../../../demo/server/tiny-model-plugin';
import { TINY_MODEL_PATH } from '../../../demo/shared/tiny-model-path';
import { buildTestModel } from '../../../scripts/build-test-model.mjs';

/** The middleware the plugin mounts on a dev server, and the path it mounts it at. */
function mounted(plugin: Plugin): { path: string; handle: Connect.NextHandleFunction } {
  let found: { path: string; handle: Connect.NextHandleFunction } | undefined;
  const server = {
    middlewares: {
      use: (path: string, handle: Connect.NextHandleFunction) => {
        found = { path, handle };
      },
    },
  } as unknown as ViteDevServer;
  const hook = plugin.configureServer;
  if (typeof hook !== 'function') throw new Error('No configureServer hook.');
  void hook.call({} as never, server);
  if (!found) throw new Error('Nothing mounted.');
  return found;
}

/** What the middleware answered one request with. */
function answer(handle: Connect.NextHandleFunction, method: string) {
  const sent: { status?: number; headers?: Record<string, string>; body?: unknown } = {};
  let passedOn = false;
  handle(
    { method } as Connect.IncomingMessage,
    {
      writeHead: (status: number, headers: Record<string, string>) => {
        sent.status = status;
        sent.headers = headers;
      },
      end: (body?: unknown) => {
        sent.body = body;
      },
    } as never,
    () => {
      passedOn = true;
    },
  );
  return { ...sent, passedOn };
}

describe("the demo servers' tiny model", () => {
  it('serves the GGUF the build script makes at its path, byte for byte, on GET and its headers on HEAD', () => {
    const { path, handle } = mounted(tinyModelPlugin());
    const bytes = buildTestModel();
    expect(path).toBe(TINY_MODEL_PATH);

    const got = answer(handle, 'GET');
    expect(got.status).toBe(200);
    expect(got.headers?.['content-length']).toBe(String(bytes.byteLength));
    expect(Buffer.compare(Buffer.from(got.body as Uint8Array), Buffer.from(bytes))).toBe(0);
    expect(new TextDecoder().decode((got.body as Uint8Array).subarray(0, 4))).toBe('GGUF');

    const head = answer(handle, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBeUndefined();
  });

  it('passes other methods on rather than answering them', () => {
    const { handle } = mounted(tinyModelPlugin());
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const got = answer(handle, method);
      expect(got).toEqual({ passedOn: true });
    }
  });

  it('writes the GGUF into the build at the same path', () => {
    const emitted: unknown[] = [];
    const hook = tinyModelPlugin().generateBundle;
    if (typeof hook !== 'function') throw new Error('No generateBundle hook.');
    hook.call({ emitFile: (file: unknown) => emitted.push(file) } as never, {} as never, {}, false);
    // Bytes compared with Buffer.compare: a deep equality over 466 KB is slow on a busy machine.
    const [file, ...more] = emitted as { type: string; fileName: string; source: Uint8Array }[];
    expect(more).toEqual([]);
    expect({ type: file?.type, fileName: file?.fileName }).toEqual({
      type: 'asset',
      fileName: 'models/tiny-llama.gguf',
    });
    expect(Buffer.compare(Buffer.from(file?.source ?? []), Buffer.from(buildTestModel()))).toBe(0);
  });
});
