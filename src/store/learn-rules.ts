import { AirlockError } from '../errors/airlock-error';
import type { LearnRule, MemoryInput, MemoryScope } from '../protocol/memory';
import { MAX_MEMORY_CONTENT_CHARS, MAX_MEMORY_KEY_CHARS } from './memory-rules';

/** The most memories one run may teach; later matches are dropped. */
export const MAX_LEARNED_PER_RUN = 20;

/** How much of a message the rules read: an input past this is searched in its first part only. */
const MAX_SEARCHED_CHARS = 20_000;

/** A rule ready to run: its pattern compiled once. */
export interface CompiledRule extends LearnRule {
  readonly regex: RegExp;
}

/**
 * Compiles the rules; a pattern that is not a regular expression, or that repeats a group
 * which itself repeats without bound (`(a+)+`, `(\w*)*`: the shape that backtracks
 * exponentially and would hang the agent worker on a crafted message), is `invalid-options`.
 */
export function compileRules(rules: readonly LearnRule[]): CompiledRule[] {
  return rules.map((rule, index) => {
    if (repeatsRepetition(rule.pattern))
      throw new AirlockError(
        'invalid-options',
        `memory.learn.rules[${index}].pattern repeats a group that itself repeats without bound ` +
          '(e.g. "(a+)+"), which can take exponential time on a crafted message; rewrite it without the nesting.',
        { details: { field: `memory.learn.rules[${index}].pattern` } },
      );
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

/**
 * Whether a pattern quantifies with `*`, `+`, `{n,}` or `{n,m}` (m > 1) a group that holds
 * such a quantifier: star height above one, the common cause of catastrophic backtracking.
 * A heuristic, not a proof: overlapping alternatives under one quantifier (`(a|a)*`) pass it.
 */
export function repeatsRepetition(pattern: string): boolean {
  // For each open group, whether it holds an unbounded repetition so far.
  const groups: boolean[] = [false];
  // Whether the atom just read is a group holding one (what a quantifier would repeat).
  let atomRepeats = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === '\\') {
      index += 1;
      atomRepeats = false;
    } else if (char === '[') {
      // A class is one atom; `]` right after `[` or `[^` is literal, escapes are skipped.
      index += pattern[index + 1] === '^' ? 2 : 1;
      if (pattern[index] === ']') index += 1;
      while (index < pattern.length && pattern[index] !== ']')
        index += pattern[index] === '\\' ? 2 : 1;
      atomRepeats = false;
    } else if (char === '(') {
      groups.push(false);
      atomRepeats = false;
    } else if (char === ')') {
      const inner = groups.length > 1 ? (groups.pop() ?? false) : false;
      if (inner) groups[groups.length - 1] = true;
      atomRepeats = inner;
    } else {
      const repeat = repetitionAt(pattern, index);
      if (repeat === undefined) {
        atomRepeats = false;
        continue;
      }
      if (repeat.unbounded) {
        if (atomRepeats) return true;
        groups[groups.length - 1] = true;
      }
      index = repeat.end - 1;
      atomRepeats = false;
    }
  }
  return false;
}

/** The quantifier starting at `index`, if any: whether it repeats more than once, and where it ends. */
function repetitionAt(
  pattern: string,
  index: number,
): { readonly unbounded: boolean; readonly end: number } | undefined {
  const char = pattern[index];
  if (char === '*' || char === '+') return { unbounded: true, end: index + 1 };
  if (char === '?') return { unbounded: false, end: index + 1 };
  if (char !== '{') return undefined;
  const braces = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index));
  if (!braces) return undefined;
  const [whole, , comma, max] = braces;
  const unbounded = comma !== undefined && (max === '' || Number(max) > 1);
  return { unbounded, end: index + whole.length };
}
