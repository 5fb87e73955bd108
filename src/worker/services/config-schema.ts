import { z } from 'zod';
import { AirlockError } from '../../errors/airlock-error';
import { checkField } from '../../errors/field-checks';
import { parseOrThrow } from '../../errors/schema-issues';
import { modelOptionsCheck } from '../../model/model-options';
import type { AgentConfig } from '../../protocol/agent-config';
import { MAX_LEVEL_CHARS } from '../../protocol/labels';
import { toolName, toolSpecsSchema } from '../tools/tool-spec-schema';

/** Short enough to leave room for the tool's name; no `__`, which separates the two. */
const mcpServerName = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,32}$/)
  .refine((name) => !name.includes('__'), { message: 'an MCP server name may not contain "__"' });

const count = z.number().min(0);

/** A string with something in it besides whitespace; the page's copy reads `/\S/` as such. */
const nonBlank = z.string().regex(/\S/, 'must not be blank');

const budgetSchema = z.object({
  modelCalls: count.exactOptional(),
  toolCalls: count.exactOptional(),
  promptTokens: count.exactOptional(),
  completionTokens: count.exactOptional(),
  totalTokens: count.exactOptional(),
  cost: count.exactOptional(),
});

/** The agent configuration as it must arrive from the page: the worker's trust boundary. */
export const agentConfigSchema = z.object({
  model: z.object({
    baseURL: z.url({ protocol: /^https?$/ }).exactOptional(),
    model: nonBlank,
    headers: z.record(z.string(), z.string()).exactOptional(),
    apiKey: nonBlank.exactOptional(),
    maxRetries: z.int().min(0).max(10).exactOptional(),
    maxRetryAfterMs: z.number().min(0).exactOptional(),
    requestTimeoutMs: z.number().positive().exactOptional(),
    options: z.record(z.string(), z.unknown()).exactOptional(),
    toolCalling: z.enum(['native', 'prompted']).exactOptional(),
    structuredOutput: z.enum(['native', 'prompted']).exactOptional(),
    api: z.enum(['chat', 'responses']).exactOptional(),
  }),
  instructions: z.string().exactOptional(),
  pageTools: toolSpecsSchema,
  toolsets: z.array(
    z.object({
      name: z.string().min(1),
      isolation: z.enum(['worker', 'iframe']),
      reuse: z.enum(['call', 'run', 'conversation']),
      poolSize: z.int().min(0).max(16),
      maxConcurrency: z.int().min(1).max(64),
      timeoutMs: z.number().positive(),
      graceMs: z.number().min(0),
      startTimeoutMs: z.number().positive(),
    }),
  ),
  mcp: z
    .array(
      z.object({
        name: mcpServerName,
        url: z.url({ protocol: /^https?$/ }),
        headers: z.record(z.string(), z.string()).exactOptional(),
        approval: z.enum(['always', 'unless-read-only', 'never']).exactOptional(),
        allowedTools: z.array(nonBlank.max(128)).exactOptional(),
        timeoutMs: z.number().positive().exactOptional(),
        connectTimeoutMs: z.number().positive().exactOptional(),
        maxOutputChars: z.int().positive().exactOptional(),
        maxTools: z.int().positive().exactOptional(),
        maxSchemaChars: z.int().positive().exactOptional(),
      }),
    )
    .max(32)
    .refine((servers) => new Set(servers.map((server) => server.name)).size === servers.length, {
      message: 'two MCP servers have the same name',
    })
    .exactOptional(),
  allowedTools: z.array(toolName).exactOptional(),
  limits: z.object({
    maxSteps: z.int().min(1),
    streamIdleTimeoutMs: z.number().positive(),
    maxInputChars: z.int().min(1),
    maxAttachmentBytes: z.int().min(1).exactOptional(),
    maxInputBytes: z.int().min(1).exactOptional(),
    networkWaitMs: z.number().min(0).exactOptional(),
  }),
  memory: z.object({
    database: nonBlank,
    userId: nonBlank.exactOptional(),
    window: z.object({ maxMessages: z.int().min(1), maxTokens: z.int().min(1) }),
    summarize: z.boolean(),
    maxMemoryTokens: z.int().min(0),
    tools: z.boolean(),
    openTimeoutMs: z.number().positive().exactOptional(),
    learn: z
      .object({
        rules: z
          .array(
            z.object({
              name: nonBlank.max(200),
              pattern: nonBlank.max(2_000),
              flags: z
                .string()
                .regex(/^[imsu]*$/)
                .exactOptional(),
              key: nonBlank.max(200),
              content: nonBlank.max(2_000),
              from: z.enum(['user', 'assistant', 'both']).exactOptional(),
              scope: z.enum(['conversation', 'lasting']).exactOptional(),
              expiresInMs: z.number().positive().exactOptional(),
              importance: z.number().min(0).max(1).exactOptional(),
            }),
          )
          .max(100),
        confirm: z.boolean(),
        model: z
          .object({
            instructions: z.string().max(4_000).exactOptional(),
            maxTokens: z.int().min(1).max(4_000),
          })
          .exactOptional(),
      })
      .exactOptional(),
  }),
  budgets: z
    .object({ run: budgetSchema.exactOptional(), conversation: budgetSchema.exactOptional() })
    .exactOptional(),
  prices: z
    .record(z.string(), z.object({ promptPerMillion: count, completionPerMillion: count }))
    .exactOptional(),
  rateLimit: z
    .object({
      requestsPerMinute: z.number().positive().exactOptional(),
      tokensPerMinute: z.number().positive().exactOptional(),
      requestBurst: z.number().min(1).exactOptional(),
    })
    .exactOptional(),
  guardrails: z.object({ input: z.boolean(), output: z.boolean(), toolArguments: z.boolean() }),
  knowledge: z
    .object({
      retrieval: z.enum(['inject', 'tool', 'both', 'off']),
      k: z.int().min(1).max(50),
      minScore: z.number().min(-1).max(1),
      chunkChars: z.int().min(50).max(100_000),
      overlapChars: z.int().min(0),
      embeddingModel: nonBlank,
      batchSize: z.int().min(1).max(2_048),
      dimensions: z.int().positive().exactOptional(),
    })
    .refine((knowledge) => knowledge.overlapChars < knowledge.chunkChars, {
      message: 'overlapChars must be less than chunkChars',
      path: ['overlapChars'],
    })
    .exactOptional(),
  flow: z
    .object({
      untrustedToSink: z.enum(['approve', 'refuse']),
      allowedDestinations: z
        .record(nonBlank.max(MAX_LEVEL_CHARS), z.array(nonBlank.max(200)).max(100))
        .exactOptional(),
    })
    .exactOptional(),
});

/** Checks a configuration from the page; a bad one is an `invalid-options` error naming each problem. */
export function parseAgentConfig(value: unknown): AgentConfig {
  const config = parseOrThrow(agentConfigSchema, value, 'The agent options are not valid');
  if (config.model.options !== undefined)
    checkField(config.model.options, 'model.options', modelOptionsCheck);
  const costBudget =
    config.budgets?.run?.cost !== undefined || config.budgets?.conversation?.cost !== undefined;
  if (costBudget && !config.prices?.[config.model.model]) {
    throw new AirlockError(
      'invalid-options',
      `A cost budget is set, but prices has no entry for the model "${config.model.model}".`,
    );
  }
  return config;
}
