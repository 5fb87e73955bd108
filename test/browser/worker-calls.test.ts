import * as Comlink from 'comlink';
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../src/errors/airlock-error';
import { installErrorTransfer } from '../../src/errors/error-transfer';
import { remoteOf, serveOnPort, transfer } from '../../src/page/worker-calls';

// The page speaks the message format of the agent worker's Comlink endpoint without
// Comlink: here a real Comlink endpoint stands for the worker, and hostile messages for a
// worker that is broken or not the agent worker at all.

interface Service {
  echo(value: unknown): Promise<unknown>;
  fail(): Promise<never>;
  callBack(target: { greet(name: string): Promise<string> }, name: string): Promise<string>;
  progress(report: (step: number) => void): Promise<void>;
  nested: { twice(value: number): Promise<number> };
  takePort(port: MessagePort): Promise<string>;
  spawn(target: { spawn(): Promise<{ port: MessagePort }> }): Promise<string>;
}

/** A Comlink endpoint on one end of a channel, as `serveAgent` exposes the agent worker. */
function comlinkService() {
  installErrorTransfer();
  const { port1, port2 } = new MessageChannel();
  const service = {
    echo: async (value: unknown) => value,
    fail: async () => {
      throw new AirlockError('not-found', 'Nothing here.', { details: { id: 'x' } });
    },
    callBack: async (target: Comlink.Remote<{ greet(name: string): string }>, name: string) =>
      await target.greet(name),
    progress: async (report: Comlink.Remote<(step: number) => void>) => {
      await report(1);
      await report(2);
    },
    nested: { twice: async (value: number) => value * 2 },
    takePort: async (port: MessagePort) =>
      await new Promise<string>((resolve) => {
        port.onmessage = (message) => resolve(String(message.data));
      }),
    spawn: async (target: Comlink.Remote<{ spawn(): { port: MessagePort } }>) => {
      const { port } = await target.spawn();
      return await new Promise<string>((resolve) => {
        port.onmessage = (message) => resolve(String(message.data));
        port.postMessage('ping');
      });
    },
  };
  Comlink.expose(service, port2);
  return remoteOf<Service>(port1);
}

/** A raw port standing for a worker that answers with whatever the test sends. */
function rawPeer() {
  const { port1, port2 } = new MessageChannel();
  const requests: { id: string; type: string; path: string[] }[] = [];
  port2.onmessage = (message) => requests.push(message.data);
  return { ...remoteOf<Service>(port1), requests, worker: port2 };
}

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i += 1)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('calls to a Comlink endpoint', () => {
  it('calls methods, nested ones too, and carries structured values both ways', async () => {
    const { remote } = comlinkService();
    const value = { list: [1, 'two', null], at: new Date(5), text: 'é😀' };

    expect(await remote.echo(value)).toEqual(value);
    expect(await remote.nested.twice(21)).toBe(42);
  });

  it('rejects with the AirlockError the endpoint threw, code and details kept', async () => {
    const { remote } = comlinkService();

    const error = await remote.fail().catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(AirlockError);
    expect(error).toMatchObject({ code: 'not-found', message: 'Nothing here.' });
    expect((error as AirlockError).details).toEqual({ id: 'x' });
  });

  it('serves objects and functions the endpoint calls back, and transfers ports', async () => {
    const { remote } = comlinkService();
    const steps: number[] = [];
    const { port1, port2 } = new MessageChannel();

    expect(await remote.callBack(serveOnPort({ greet: async (name) => `hi ${name}` }), 'Ada')).toBe(
      'hi Ada',
    );
    await remote.progress(serveOnPort((step: number) => void steps.push(step)));
    const taken = remote.takePort(transfer(port2, [port2]));
    port1.postMessage('through');
    expect(await taken).toBe('through');
    expect(steps).toEqual([1, 2]);
  });

  it('transfers a port a served method answers with', async () => {
    const { remote } = comlinkService();
    const host = {
      async spawn() {
        const { port1, port2 } = new MessageChannel();
        port1.onmessage = () => port1.postMessage('pong');
        return transfer({ port: port2 }, [port2]);
      },
    };

    expect(await remote.spawn(serveOnPort(host))).toBe('pong');
  });

  it('reads a property, which tells that the endpoint is serving', async () => {
    const { read } = comlinkService();

    expect(await read('no such property')).toBeUndefined();
  });
});

describe('hostile or broken messages from the worker', () => {
  it('rejects a call whose answer is malformed with worker-crashed, and ignores unknown ids', async () => {
    const peer = rawPeer();
    const answers = [
      { type: 'HANDLER', name: 'proxy', value: null },
      { type: 'HANDLER', name: 'throw', value: { code: 42 } },
      { type: 'BOGUS', value: 1 },
    ];

    const calls = answers.map(() => peer.remote.echo('x').catch((error: unknown) => error));
    await waitUntil(() => peer.requests.length === answers.length);
    peer.worker.postMessage({ id: 'not asked', type: 'RAW', value: 'stray' });
    peer.worker.postMessage(null);
    peer.requests.forEach((request, index) => {
      peer.worker.postMessage({ ...answers[index], id: request.id });
    });

    for (const error of await Promise.all(calls))
      expect(error).toMatchObject({ name: 'AirlockError', code: 'worker-crashed' });
  });

  it('answers each call once: a second answer with the same id is ignored', async () => {
    const peer = rawPeer();

    const call = peer.remote.echo('x');
    await waitUntil(() => peer.requests.length === 1);
    const [request] = peer.requests;
    peer.worker.postMessage({ id: request?.id, type: 'RAW', value: 'first' });
    peer.worker.postMessage({ id: request?.id, type: 'RAW', value: 'second' });

    expect(await call).toBe('first');
  });

  it('refuses forged calls to a served object: no inherited or unknown method runs, nothing malformed is answered', async () => {
    const peer = rawPeer();
    let greeted = 0;
    const target = serveOnPort({
      greet: async () => {
        greeted += 1;
        return 'hi';
      },
    });
    void peer.remote.callBack(target as never, 'x').catch(() => {});
    await waitUntil(() => peer.requests.length === 1);
    const served = (peer.requests[0] as unknown as { argumentList: { value: MessagePort }[] })
      .argumentList[0]?.value as MessagePort;
    const answers: { id: string; type: string; name?: string; value: unknown }[] = [];
    served.onmessage = (message) => answers.push(message.data);
    const forged = [
      { id: 'a', type: 'APPLY', path: ['constructor'], argumentList: [] },
      { id: 'b', type: 'APPLY', path: ['__proto__'], argumentList: [] },
      { id: 'c', type: 'APPLY', path: ['toString'], argumentList: [] },
      { id: 'd', type: 'APPLY', path: ['missing'], argumentList: [] },
      { id: 'e', type: 'APPLY', path: ['greet', 'call'], argumentList: [] },
      {
        id: 'f',
        type: 'APPLY',
        path: ['greet'],
        argumentList: [{ type: 'HANDLER', name: 'proxy' }],
      },
      { id: 'g', type: 'SET', path: ['greet'], value: { type: 'RAW', value: 1 } },
      { id: 'h', type: 'GET', path: ['greet'] },
      { id: 'i', type: 'APPLY', path: 'greet', argumentList: [] },
    ];
    for (const message of forged) served.postMessage(message);
    served.postMessage({ type: 'APPLY', path: ['greet'] });
    served.postMessage('not a request');
    served.postMessage({ id: 'ok', type: 'APPLY', path: ['greet'], argumentList: [] });

    await waitUntil(() => answers.length === forged.length + 1);
    expect(answers.filter((answer) => answer.id !== 'ok')).toEqual(
      forged.map(({ id }) => ({
        id,
        type: 'HANDLER',
        name: 'throw',
        value: expect.objectContaining({ code: 'invalid-input' }),
      })),
    );
    expect(answers.find((answer) => answer.id === 'ok')).toEqual({
      id: 'ok',
      type: 'RAW',
      value: 'hi',
    });
    expect(greeted).toBe(1);
  });
});
