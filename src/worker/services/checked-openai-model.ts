// openAIModel's config checked and its model made: a chunk of its own (see openai-model.ts).
import { AirlockError } from '../../errors/airlock-error';
import { checkField } from '../../errors/field-checks';
import { parseOrThrow } from '../../errors/schema-issues';
import type { ChatModel } from '../../model/chat-model';
import { modelOptionsCheck } from '../../model/model-options';
import { createOpenAIChatModel } from '../../model/openai-chat-model';
import type { ModelConfig } from '../../protocol/agent-config';
import { agentConfigSchema } from './config-schema';

/** The built-in model at `config.baseURL`, `config` checked as the page's `model` option is (`invalid-options`). */
export function checkedOpenAIModel(config: ModelConfig & { readonly baseURL: string }): ChatModel {
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
