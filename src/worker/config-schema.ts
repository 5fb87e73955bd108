import { z } from 'zod';
import { AirlockError } from '../errors/airlock-error';
import type { ToolSpec } from '../protocol/tools';
import type { AgentConfig } from '../protocol/wire';

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/);

const toolSpecSchema = z.object({
  name: toolName,
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  policy: z.object({
    timeoutMs: z.number().positive().exactOptional(),
    maxOutputChars: z.int().positive().exactOptional(),
    approval: z.enum(['never', 'always', 'by-arguments']),
  }),
  callableTools: z.array(toolName).max(64).exactOptional(),
});

const count = z.number().min(0);

const budgetSchema = z.object({
  modelCalls: count.exactOptional(),
  toolCalls: count.exactOptional(),
  promptTokens: count.exactOptional(),
  completionTokens: count.exactOptional(),
  totalTokens: count.exactOptional(),
  cost: count.exactOptional(),
});

/** The agent configuration as it must arrive from the page: the worker's trust boundary. */
const agentConfigSchema = z.object({
  model: z.object({
    baseURL: z.url({ protocol: /^https?$/ }),
    model: z.string().min(1),
    headers: z.record(z.string(), z.string()).exactOptional(),
    apiKey: z.string().min(1).exactOptional(),
    maxRetries: z.int().min(0).max(10).exactOptional(),
    maxRetryAfterMs: z.number().min(0).exactOptional(),
    requestTimeoutMs: z.number().positive().exactOptional(),
    temperature: z.number().min(0).max(2).exactOptional(),
    toolCalling: z.enum(['native', 'prompted']).exactOptional(),
    structuredOutput: z.enum(['native', 'prompted']).exactOptional(),
  }),
  instructions: z.string().exactOptional(),
  pageTools: z.array(toolSpecSchema),
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
  allowedTools: z.array(toolName).exactOptional(),
  limits: z.object({
    maxSteps: z.int().min(1),
    streamIdleTimeoutMs: z.number().positive(),
    maxInputChars: z.int().min(1),
  }),
  memory: z.object({
    database: z.string().min(1),
    userId: z.string().min(1).exactOptional(),
    window: z.object({ maxMessages: z.int().min(1), maxTokens: z.int().min(1) }),
    summarize: z.boolean(),
    maxMemoryTokens: z.int().min(0),
    tools: z.boolean(),
    openTimeoutMs: z.number().positive().exactOptional(),
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
      embeddingModel: z.string().min(1),
      batchSize: z.int().min(1).max(2_048),
      dimensions: z.int().positive().exactOptional(),
    })
    .refine((knowledge) => knowledge.overlapChars < knowledge.chunkChars, {
      message: 'overlapChars must be less than chunkChars',
      path: ['overlapChars'],
    })
    .exactOptional(),
});

/** Checks a configuration from the page; a bad one is an `invalid-options` error naming each problem. */
export function parseAgentConfig(value: unknown): AgentConfig {
  const config = parseOrThrow(agentConfigSchema, value, 'The agent options are not valid');
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

/** Checks the tools a sandbox says it serves, as they come from code the agent does not trust. */
export function parseToolSpecs(value: unknown, toolset: string): ToolSpec[] {
  return parseOrThrow(
    z.array(toolSpecSchema),
    value,
    `Toolset "${toolset}" described its tools wrongly`,
  );
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
  );
  // `field` names the first problem, as the page's own checks do; `issues` lists them all.
  const field = parsed.error.issues[0]?.path.join('.') || '(root)';
  throw new AirlockError('invalid-options', `${what}: ${problems.join('; ')}.`, {
    details: { field, issues: problems },
  });
}
