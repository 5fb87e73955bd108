// Made by scripts/option-rules.mjs from the agent worker's schema
// (src/worker/services/config-schema.ts); do not edit. test/unit/page/option-rules.test.ts
// fails while it is stale; run it with `-u` to make it anew.

export const AGENT_CONFIG_RULES = {
  "!": [
    "model",
    "limits",
    "memory"
  ],
  "model": {
    "!": [
      "model"
    ],
    "baseURL": "url",
    "model": "str !",
    "headers": {
      "*": "str"
    },
    "apiKey": "str !",
    "maxRetries": "int min:0 max:10",
    "maxRetryAfterMs": "num min:0",
    "requestTimeoutMs": "num >0",
    "options": {
      "*": "any"
    },
    "toolCalling": "enum native|prompted",
    "structuredOutput": "enum native|prompted",
    "api": "enum chat|responses"
  },
  "instructions": "str",
  "mcp": [
    {
      "!": [
        "name",
        "url"
      ],
      "name": "str re:^[a-zA-Z0-9_-]{1,32}$",
      "url": "url",
      "protocol": "enum auto|2026-07-28|2025-11-25",
      "headers": {
        "*": "str"
      },
      "approval": "enum always|unless-read-only|never",
      "allowedTools": [
        "str ! max:128"
      ],
      "timeoutMs": "num >0",
      "connectTimeoutMs": "num >0",
      "maxOutputChars": "int >0",
      "maxTools": "int >0",
      "maxSchemaChars": "int >0"
    },
    32
  ],
  "allowedTools": [
    "str re:^[a-zA-Z0-9_-]{1,64}$"
  ],
  "limits": {
    "!": [
      "maxSteps",
      "streamIdleTimeoutMs",
      "maxInputChars"
    ],
    "maxSteps": "int min:1",
    "streamIdleTimeoutMs": "num >0",
    "maxInputChars": "int min:1",
    "maxAttachmentBytes": "int min:1",
    "maxInputBytes": "int min:1",
    "networkWaitMs": "num min:0"
  },
  "memory": {
    "!": [
      "database",
      "window",
      "summarize",
      "maxMemoryTokens",
      "tools"
    ],
    "database": "str !",
    "userId": "str !",
    "window": {
      "!": [
        "maxMessages",
        "maxTokens"
      ],
      "maxMessages": "int min:1",
      "maxTokens": "int min:1"
    },
    "summarize": "bool",
    "maxMemoryTokens": "int min:0",
    "tools": "bool",
    "openTimeoutMs": "num >0",
    "learn": {
      "!": [
        "rules",
        "confirm"
      ],
      "rules": [
        {
          "!": [
            "name",
            "pattern",
            "key",
            "content"
          ],
          "name": "str ! max:200",
          "pattern": "str ! max:2000",
          "flags": "str re:^[imsu]*$",
          "key": "str ! max:200",
          "content": "str ! max:2000",
          "from": "enum user|assistant|both",
          "scope": "enum conversation|lasting",
          "expiresInMs": "num >0",
          "importance": "num min:0 max:1"
        },
        100
      ],
      "confirm": "bool",
      "model": {
        "!": [
          "maxTokens"
        ],
        "instructions": "str max:4000",
        "maxTokens": "int min:1 max:4000"
      }
    }
  },
  "budgets": {
    "run": {
      "modelCalls": "num min:0",
      "toolCalls": "num min:0",
      "promptTokens": "num min:0",
      "completionTokens": "num min:0",
      "totalTokens": "num min:0",
      "cost": "num min:0"
    },
    "conversation": {
      "modelCalls": "num min:0",
      "toolCalls": "num min:0",
      "promptTokens": "num min:0",
      "completionTokens": "num min:0",
      "totalTokens": "num min:0",
      "cost": "num min:0"
    }
  },
  "prices": {
    "*": {
      "!": [
        "promptPerMillion",
        "completionPerMillion"
      ],
      "promptPerMillion": "num min:0",
      "completionPerMillion": "num min:0"
    }
  },
  "rateLimit": {
    "requestsPerMinute": "num >0",
    "tokensPerMinute": "num >0",
    "requestBurst": "num min:1"
  },
  "knowledge": {
    "!": [
      "retrieval",
      "k",
      "minScore",
      "chunkChars",
      "overlapChars",
      "embeddingModel",
      "batchSize"
    ],
    "retrieval": "enum inject|tool|both|off",
    "k": "int min:1 max:50",
    "minScore": "num min:-1 max:1",
    "chunkChars": "int min:50 max:100000",
    "overlapChars": "int min:0",
    "embeddingModel": "str !",
    "batchSize": "int min:1 max:2048",
    "dimensions": "int >0"
  },
  "flow": {
    "!": [
      "untrustedToSink"
    ],
    "untrustedToSink": "enum approve|refuse",
    "allowedDestinations": {
      "*": [
        "str ! max:200",
        100
      ]
    }
  }
} as const;
