// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import { route } from '../../../src/model/route-model';
import {
  chatModelConformance,
  conformanceTurn,
  type ScriptedTurn,
} from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

// The router is a ChatModel like any other: it must keep the contract the loop relies on,
// routing to models over the fake server (one declined, one failing 500 before the answer).

const server = useModelServer();

const endpoint = (script: ScriptedTurn[] | (() => ScriptedTurn)) =>
  createOpenAIChatModel({
    baseURL: server.createSession(script).baseURL,
    model: 'airlock-test-model',
    maxRetries: 0,
  });

const failingSessions: { requests: readonly unknown[] }[] = [];

describe('route([...]) over models on the fake server', () => {
  for (const check of chatModelConformance({
    model: (scenario) => {
      const failing = server.createSession(() => ({ status: 503, message: 'Down for now.' }));
      failingSessions.push(failing);
      return route([
        {
          model: endpoint(() => ({ text: 'must not be asked' })),
          name: 'never',
          when: () => false,
        },
        {
          name: 'down',
          model: createOpenAIChatModel({
            baseURL: failing.baseURL,
            model: 'airlock-test-model',
            maxRetries: 0,
          }),
        },
        { name: 'answering', model: endpoint([conformanceTurn(scenario)]) },
      ]);
    },
  }))
    it(check.name, check.run);

  it('sent the failing route a request in the cases that asked for an answer', () => {
    expect(failingSessions.some((session) => session.requests.length > 0)).toBe(true);
  });
});
