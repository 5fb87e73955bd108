import {
  chatModelConformance,
  conformanceTurn,
  createRemoteSession,
  type ScriptedTurn,
} from 'airlock-agents/testing/remote';
import { describe, inject, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/model/openai-chat-model';
import { route } from '../../src/model/route-model';

// The conformance suite where on-device engines live: in a page, with the built-in model
// reaching the fake server across origins (the suite imports nothing of Node's).

describe('the OpenAI Chat Completions model in a page', () => {
  const cases = chatModelConformance({
    model: async (scenario) => {
      const session = await createRemoteSession(inject('modelServerUrl'), [
        conformanceTurn(scenario),
      ]);
      return createOpenAIChatModel({
        baseURL: session.baseURL,
        model: 'airlock-test-model',
        maxRetries: 0,
      });
    },
  });
  for (const check of cases) it(check.name, check.run);
});

describe('the model router in a page, over a failing endpoint and an answering one', () => {
  const endpoint = async (turns: ScriptedTurn[]) =>
    createOpenAIChatModel({
      baseURL: (await createRemoteSession(inject('modelServerUrl'), turns)).baseURL,
      model: 'airlock-test-model',
      maxRetries: 0,
    });
  const cases = chatModelConformance({
    model: async (scenario) =>
      route([
        // Enough 503s for every call a case makes: each is passed over for the next route.
        { name: 'down', model: await endpoint(Array(4).fill({ status: 503, message: 'Down.' })) },
        { name: 'answering', model: await endpoint([conformanceTurn(scenario)]) },
      ]),
  });
  for (const check of cases) it(check.name, check.run);
});
