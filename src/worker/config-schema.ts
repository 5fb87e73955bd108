import { z } from 'zod';
import { AirlockError } from '../errors/airlock-error';
import type { AgentConfig } from '../protocol/wire';

const jsonSchemaObject = z.record(z.string(), z.unknown());

/** The agent configuration as it must arrive from the page: the worker's trust boundary. */
const agentConfigSchema = z.object({
  model: z.object({
    baseURL: z.url({ protocol: /^https?$/ }),
    model: z.string().min(1),
    headers: z.record(z.string(), z.string()).exactOptional(),
    apiKey: z.string().min(1).exactOptional(),
    maxRetries: z.int().min(0).max(10).exactOptional(),
    requestTimeoutMs: z.number().positive().exactOptional(),
    temperature: z.number().min(0).max(2).exactOptional(),
  }),
  instructions: z.string().exactOptional(),
  tools: z.array(
    z.object({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
      description: z.string(),
      parameters: jsonSchemaObject,
    }),
  ),
  limits: z.object({
    maxSteps: z.int().min(1),
    streamIdleTimeoutMs: z.number().positive(),
  }),
});

/** Checks a configuration from the page; a bad one is an `invalid-options` error naming each problem. */
export function parseAgentConfig(value: unknown): AgentConfig {
  const parsed = agentConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
  );
  throw new AirlockError(
    'invalid-options',
    `The agent options are not valid: ${problems.join('; ')}.`,
    {
      details: { issues: problems },
    },
  );
}
