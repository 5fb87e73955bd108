import { AirlockError } from '../errors/airlock-error';
import type { MemoryInput, MemoryScope } from '../protocol/memory';
import { MAX_MEMORY_CONTENT_CHARS, MAX_MEMORY_KEY_CHARS } from './memory-rules';

/**
 * A rule that learns a memory from what was said: where `pattern` matches, a memory with
 * `key` and `content` is proposed, `$1`, `$<name>` standing for the match's groups. Plain
 * data, so it crosses to the agent worker.
 */
export interface LearnRule {
  /** Names the rule in each memory's `source`. */
  readonly name: string;
  /** A regular expression (its source, as `new RegExp` takes it). */
  readonly pattern: string;
  /** Its flags (`g` is always added; `i`, `m`, `s`, `u` as wanted). */
  readonly flags?: string;
  /** The memory's key, e.g. `order:$1`; memories of one scope and key replace each other. */
  readonly key: string;
  /** The memory's content, e.g. `Order $1 is the user's current order.` */
  readonly content: string;
  /** What is searched: the user's input (default), the final answer, or both. */
  readonly from?: 'user' | 'assistant' | 'both';
  /** `conversation`, or `lasting` (the user's when `memory.userId` is set, else global; default). */
  readonly scope?: 'conversation' | 'lasting';
  /** The memory expires this long after it was learnt. */
  readonly expiresInMs?: number;
  /** 0 to 1 (default 0.5). */
  readonly importance?: number;
}

/** How an agent learns memories after each finished run. */
export interface LearnConfig {
  readonly rules: readonly LearnRule[];
  /**
   * Hold what is learnt for the app to confirm: the `memory-learned` events carry proposals
   * (status `proposed`) that the app saves with `agent.memory.saveMemory`, or not. Default
   * false: memories are saved at once (status `saved`).
   */
  readonly confirm: boolean;
}

/** The most memories one run may teach; later matches are dropped. */
export const MAX_LEARNED_PER_RUN = 20;

/** How much of a message the rules read: an input past this is searched in its first part only. */
const MAX_SEARCHED_CHARS = 20_000;

/** A rule ready to run: its pattern compiled once. */
export interface CompiledRule extends LearnRule {
  readonly regex: RegExp;
}

/** Compiles the rules; a pattern that is not a regular expression is `invalid-options`. */
export function compileRules(rules: readonly LearnRule[]): CompiledRule[] {
  return rules.map((rule, index) => {
    try {
      const flags = new Set([...(rule.flags ?? ''), 'g']);
      return { ...rule, regex: new RegExp(rule.pattern, [...flags].join('')) };
    } catch (error) {
      throw new AirlockError(
        'invalid-options',
        `memory.learn.rules[${index}].pattern is not a regular expression: ${(error as Error).message}`,
        { details: { field: `memory.learn.rules[${index}].pattern` } },
      );
    }
  });
}

/** What a finished run said, for the rules to read. */
export interface FinishedExchange {
  readonly runId: string;
  readonly conversationId: string;
  /** The user's input (after input guardrails). */
  readonly user: string;
  /** The final answer. */
  readonly assistant: string;
  readonly scopes: { readonly conversation: MemoryScope; readonly lasting: MemoryScope };
  readonly now: number;
}

/**
 * The memories the rules find in a finished exchange, in rule order, one per key and scope
 * (the last match wins), at most `MAX_LEARNED_PER_RUN`. What they hold is text the user or
 * the model wrote: it is stored as a memory's content, which reaches later runs only inside
 * the encoded memories data block, never as instructions.
 */
export function learnFrom(
  rules: readonly CompiledRule[],
  exchange: FinishedExchange,
): MemoryInput[] {
  const learnt = new Map<string, MemoryInput>();
  for (const rule of rules) {
    const from = rule.from ?? 'user';
    const texts = [
      ...(from === 'assistant' ? [] : [exchange.user]),
      ...(from === 'user' ? [] : [exchange.assistant]),
    ];
    for (const text of texts) {
      for (const match of text.slice(0, MAX_SEARCHED_CHARS).matchAll(rule.regex)) {
        if (match[0] === '') continue;
        const key = expand(rule.key, match).trim().slice(0, MAX_MEMORY_KEY_CHARS);
        const content = expand(rule.content, match).trim().slice(0, MAX_MEMORY_CONTENT_CHARS);
        if (!key || !content) continue;
        const scope =
          rule.scope === 'conversation' ? exchange.scopes.conversation : exchange.scopes.lasting;
        learnt.delete(`${scope}\n${key}`);
        learnt.set(`${scope}\n${key}`, {
          key,
          content,
          scope,
          ...(rule.importance === undefined ? {} : { importance: rule.importance }),
          ...(rule.expiresInMs === undefined ? {} : { expiresAt: exchange.now + rule.expiresInMs }),
          source: {
            via: 'rule',
            rule: rule.name,
            runId: exchange.runId,
            conversationId: exchange.conversationId,
          },
        });
      }
    }
  }
  return [...learnt.values()].slice(-MAX_LEARNED_PER_RUN);
}

/** A template with `$1`…`$99`, `$<name>` and `$$` replaced from a match. */
function expand(template: string, match: RegExpMatchArray): string {
  return template.replace(/\$(\$|\d{1,2}|<([^>]*)>)/g, (whole, token: string, name?: string) => {
    if (token === '$') return '$';
    if (name !== undefined) return match.groups?.[name] ?? '';
    const group = Number(token);
    return group < match.length ? (match[group] ?? '') : whole;
  });
}
