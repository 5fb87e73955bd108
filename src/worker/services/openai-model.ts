// The built-in model, for an app that puts it among models of its own (e.g. in a route).
import { AirlockError } from '../../errors/airlock-error';
import { checkField } from '../../errors/field-checks';
import { parseOrThrow } from '../../errors/schema-issues';
import type { ChatModel } from '../../model/chat-model';
import { modelOptionsCheck } from '../../model/model-options';
import { createOpenAIChatModel } from '../../model/openai-chat-model';
import type { ModelConfig } from '../../protocol/agent-config';
import { agentConfigSchema } from './config-schema';

/**
 * The model an agent uses when its worker serves none of its own: the `openai` client at
 * `config.baseURL` (Chat Completions, or the Responses API with `api: 'responses'`). For a
 * worker entry that mixes it with models of its own, e.g. in `route([...])`:
 * `serveAgent({ model: (config) => route([{ model: onDevice }, { model: openAIModel(config) }]) })`.
 * `config` is checked as the page's `model` option is; a bad one fails `invalid-options`.
 */
export function openAIModel(config: ModelConfig & { readonly baseURL: string }): ChatModel {
  const checked = parseOrThrow(
    agentConfigSchema.shape.model,
    config,
    'The options of openAIModel are not valid',
  );
  if (checked.baseURL === undefined)
    throw new AirlockError('invalid-options', 'openAIModel needs a `baseURL` (the proxy’s URL).', {
      details: { field: 'baseURL' },
    });
  if (checked.options !== undefined) checkField(checked.options, 'options', modelOptionsCheck);
  return createOpenAIChatModel({ ...checked, baseURL: checked.baseURL });
}
