import { z } from 'zod/mini';
import { AirlockError } from '../../errors/airlock-error';
import { checkField } from '../../errors/field-checks';
import { parseOrThrow } from '../../errors/schema-issues';
import { modelOptionsCheck } from '../../model/model-options';
import type { AgentConfig } from '../../protocol/agent-config';
import { MAX_LEVEL_CHARS } from '../../protocol/labels';
import { toolName, toolSpecsSchema } from '../tools/tool-spec-schema';

/** Short enough to leave room for the tool's name; no `__`, which separates the two. */
const mcpServerName = z.string().check(
  z.regex(/^[a-zA-Z0-9_-]{1,32}$/),
  z.refine((name) => !name.includes('__'), { message: 'an MCP server name may not contain "__"' }),
);

const count = z.number().check(z.gte(0));

/** A string with something in it besides whitespace; the page's copy reads `/\S/` as such. */
const nonBlank = z.string().check(z.regex(/\S/, 'must not be blank'));

const budgetSchema = z.object({
  modelCalls: z.exactOptional(count),
  toolCalls: z.exactOptional(count),
  promptTokens: z.exactOptional(count),
  completionTokens: z.exactOptional(count),
  totalTokens: z.exactOptional(count),
  cost: z.exactOptional(count),
});

/** The agent configuration as it must arrive from the page: the worker's trust boundary. */
export const agentConfigSchema = z.object({
  model: z.object({
    baseURL: z.exactOptional(z.url({ protocol: /^https?$/ })),
    model: nonBlank,
    headers: z.exactOptional(z.record(z.string(), z.string())),
    apiKey: z.exactOptional(nonBlank),
    maxRetries: z.exactOptional(z.int().check(z.gte(0), z.lte(10))),
    maxRetryAfterMs: z.exactOptional(z.number().check(z.gte(0))),
    requestTimeoutMs: z.exactOptional(z.number().check(z.positive())),
    options: z.exactOptional(z.record(z.string(), z.unknown())),
    toolCalling: z.exactOptional(z.enum(['native', 'prompted'])),
    structuredOutput: z.exactOptional(z.enum(['native', 'prompted'])),
    api: z.exactOptional(z.enum(['chat', 'responses'])),
  }),
  instructions: z.exactOptional(z.string()),
  pageTools: toolSpecsSchema,
  toolsets: z.array(
    z.object({
      name: z.string().check(z.minLength(1)),
      isolation: z.enum(['worker', 'iframe']),
      reuse: z.enum(['call', 'run', 'conversation']),
      poolSize: z.int().check(z.gte(0), z.lte(16)),
      maxConcurrency: z.int().check(z.gte(1), z.lte(64)),
      timeoutMs: z.number().check(z.positive()),
      graceMs: z.number().check(z.gte(0)),
      startTimeoutMs: z.number().check(z.positive()),
    }),
  ),
  mcp: z.exactOptional(
    z
      .array(
        z.object({
          name: mcpServerName,
          url: z.url({ protocol: /^https?$/ }),
          protocol: z.exactOptional(z.enum(['auto', '2026-07-28', '2025-11-25'])),
          headers: z.exactOptional(z.record(z.string(), z.string())),
          approval: z.exactOptional(z.enum(['always', 'unless-read-only', 'never'])),
          allowedTools: z.exactOptional(z.array(nonBlank.check(z.maxLength(128)))),
          timeoutMs: z.exactOptional(z.number().check(z.positive())),
          connectTimeoutMs: z.exactOptional(z.number().check(z.positive())),
          maxOutputChars: z.exactOptional(z.int().check(z.positive())),
          maxTools: z.exactOptional(z.int().check(z.positive())),
          maxSchemaChars: z.exactOptional(z.int().check(z.positive())),
        }),
      )
      .check(
        z.maxLength(32),
        z.refine(
          (servers) => new Set(servers.map((server) => server.name)).size === servers.length,
          {
            message: 'two MCP servers have the same name',
          },
        ),
      ),
  ),
  allowedTools: z.exactOptional(z.array(toolName)),
  limits: z.object({
    maxSteps: z.int().check(z.gte(1)),
    streamIdleTimeoutMs: z.number().check(z.positive()),
    maxInputChars: z.int().check(z.gte(1)),
    maxAttachmentBytes: z.exactOptional(z.int().check(z.gte(1))),
    maxInputBytes: z.exactOptional(z.int().check(z.gte(1))),
    networkWaitMs: z.exactOptional(z.number().check(z.gte(0))),
  }),
  memory: z.object({
    database: nonBlank,
    userId: z.exactOptional(nonBlank),
    window: z.object({ maxMessages: z.int().check(z.gte(1)), maxTokens: z.int().check(z.gte(1)) }),
    summarize: z.boolean(),
    maxMemoryTokens: z.int().check(z.gte(0)),
    tools: z.boolean(),
    openTimeoutMs: z.exactOptional(z.number().check(z.positive())),
    learn: z.exactOptional(
      z.object({
        rules: z
          .array(
            z.object({
              name: nonBlank.check(z.maxLength(200)),
              pattern: nonBlank.check(z.maxLength(2_000)),
              flags: z.exactOptional(z.string().check(z.regex(/^[imsu]*$/))),
              key: nonBlank.check(z.maxLength(200)),
              content: nonBlank.check(z.maxLength(2_000)),
              from: z.exactOptional(z.enum(['user', 'assistant', 'both'])),
              scope: z.exactOptional(z.enum(['conversation', 'lasting'])),
              expiresInMs: z.exactOptional(z.number().check(z.positive())),
              importance: z.exactOptional(z.number().check(z.gte(0), z.lte(1))),
            }),
          )
          .check(z.maxLength(100)),
        confirm: z.boolean(),
        model: z.exactOptional(
          z.object({
            instructions: z.exactOptional(z.string().check(z.maxLength(4_000))),
            maxTokens: z.int().check(z.gte(1), z.lte(4_000)),
          }),
        ),
      }),
    ),
  }),
  budgets: z.exactOptional(
    z.object({ run: z.exactOptional(budgetSchema), conversation: z.exactOptional(budgetSchema) }),
  ),
  prices: z.exactOptional(
    z.record(z.string(), z.object({ promptPerMillion: count, completionPerMillion: count })),
  ),
  rateLimit: z.exactOptional(
    z.object({
      requestsPerMinute: z.exactOptional(z.number().check(z.positive())),
      tokensPerMinute: z.exactOptional(z.number().check(z.positive())),
      requestBurst: z.exactOptional(z.number().check(z.gte(1))),
    }),
  ),
  guardrails: z.object({ input: z.boolean(), output: z.boolean(), toolArguments: z.boolean() }),
  knowledge: z.exactOptional(
    z
      .object({
        retrieval: z.enum(['inject', 'tool', 'both', 'off']),
        k: z.int().check(z.gte(1), z.lte(50)),
        minScore: z.number().check(z.gte(-1), z.lte(1)),
        chunkChars: z.int().check(z.gte(50), z.lte(100_000)),
        overlapChars: z.int().check(z.gte(0)),
        embeddingModel: nonBlank,
        batchSize: z.int().check(z.gte(1), z.lte(2_048)),
        dimensions: z.exactOptional(z.int().check(z.positive())),
      })
      .check(
        z.refine((knowledge) => knowledge.overlapChars < knowledge.chunkChars, {
          message: 'overlapChars must be less than chunkChars',
          path: ['overlapChars'],
        }),
      ),
  ),
  flow: z.exactOptional(
    z.object({
      untrustedToSink: z.enum(['approve', 'refuse']),
      allowedDestinations: z.exactOptional(
        z.record(
          nonBlank.check(z.maxLength(MAX_LEVEL_CHARS)),
          z.array(nonBlank.check(z.maxLength(200))).check(z.maxLength(100)),
        ),
      ),
    }),
  ),
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
