import {
  arrayCheck,
  booleanCheck,
  checkField,
  type FieldCheck,
  invalidField,
  numberCheck,
  oneOfCheck,
  optional,
  recordCheck,
  shapeCheck,
  stringCheck,
} from '../errors/field-checks';
import { AGENT_CONFIG_RULES } from './agent-config-rules';

/**
 * The page's copy of the agent worker's option rules. They are declared once, by the
 * worker's zod schema (`worker/services/config-schema.ts`); `agent-config-rules.ts` is made
 * from it (test/unit/page/option-rules.test.ts fails while it is stale, and `-u` remakes it)
 * and read here into field checks, so a bad option fails on the page, naming its field,
 * before any worker starts, without zod in the page bundle.
 *
 * Rules a JSON description cannot hold (two MCP servers of one name, `overlapChars` below
 * `chunkChars`, a cost budget without a price) are the worker's alone: they fail `ready`.
 */

/**
 * One option's rule, as data small enough for the page's first chunk: an object of its
 * fields' rules, whose `"!"` lists the fields it cannot do without; `{ "*": rule }` for a
 * record; `[rule]` or `[rule, maxItems]` for an array; or a leaf, a type and its bounds:
 * `any`, `bool`, `enum a|b`, `int min:0 max:10`, `num >0`, `url`,
 * `str ! max:200 re:^[a-z]+$` (`!`: not blank; the pattern comes last).
 */
export type OptionRule =
  | string
  | readonly [OptionRule]
  | readonly [OptionRule, number]
  | ObjectRule;

/** An object's rule: its fields' rules, and under `"!"` the names of the required ones. */
type ObjectRule = { readonly [field: string]: OptionRule | readonly string[] };

/** Any value: what a rule with nothing to say about its items checks. */
const anything: FieldCheck = () => {};

/** A string that parses as an absolute http(s) URL. */
const absoluteUrl: FieldCheck = (value, field, code) => {
  const protocol = typeof value === 'string' && URL.canParse(value) && new URL(value).protocol;
  if (protocol !== 'http:' && protocol !== 'https:')
    throw invalidField(field, 'an absolute http(s) URL', code, { value });
};

/** A string matching `pattern` (the whole of it, as the schema's regex was anchored). */
function patternCheck(pattern: string): FieldCheck {
  const regex = new RegExp(pattern);
  return (value, field, code) => {
    if (typeof value !== 'string' || !regex.test(value))
      throw invalidField(field, `a string matching /${pattern}/`, code, { value });
  };
}

/** The check of an object's fields; `prefix: ''` names them from the root. */
function objectCheck(rule: ObjectRule, prefix?: string): FieldCheck {
  const { '!': required = [], ...fields } = rule as { readonly '!'?: readonly string[] };
  return shapeCheck(
    Object.fromEntries(
      Object.entries(fields).map(([key, item]) => {
        const check = requiredRuleCheck(item as OptionRule);
        return [key, required.includes(key) ? check : optional(check)];
      }),
    ),
    prefix,
  );
}

function requiredRuleCheck(rule: OptionRule): FieldCheck {
  if (typeof rule === 'string') return leafCheck(rule);
  if (Array.isArray(rule)) {
    const [item, maxItems] = rule as readonly [OptionRule, number?];
    const items = arrayCheck(requiredRuleCheck(item));
    if (maxItems === undefined) return items;
    return (value, field, code) => {
      items(value, field, code);
      if ((value as unknown[]).length > maxItems)
        throw invalidField(field, `an array of at most ${maxItems} items`, code);
    };
  }
  const fields = rule as ObjectRule;
  const entry = fields['*'];
  return entry === undefined
    ? objectCheck(fields)
    : recordCheck(requiredRuleCheck(entry as OptionRule));
}

/** The check a leaf states (see `OptionRule`). */
function leafCheck(leaf: string): FieldCheck {
  const [head = leaf, pattern] = leaf.split(' re:');
  const [type, ...tokens] = head.split(' ');
  const bound = (name: 'min' | 'max') => {
    const token = tokens.find((item) => item.startsWith(`${name}:`));
    return token === undefined ? {} : { [name]: Number(token.slice(4)) };
  };
  if (type === 'any') return anything;
  if (type === 'bool') return booleanCheck;
  if (type === 'url') return absoluteUrl;
  if (type === 'enum') return oneOfCheck((tokens[0] ?? '').split('|'));
  if (type === 'int' || type === 'num')
    return numberCheck({
      ...(type === 'int' ? { integer: true } : {}),
      ...(tokens.includes('>0') ? { positive: true } : {}),
      ...bound('min'),
      ...bound('max'),
    });
  const { max } = bound('max');
  const text = stringCheck({
    ...(tokens.includes('!') ? { nonBlank: true } : {}),
    ...(max === undefined ? {} : { maxChars: max }),
  });
  if (pattern === undefined) return text;
  const matching = patternCheck(pattern);
  return (value, field, code) => {
    text(value, field, code);
    matching(value, field, code);
  };
}

const RULES: ObjectRule = AGENT_CONFIG_RULES;

/**
 * Checks the configuration the page made from the options by the worker's rules; a field is
 * named from the root (`memory.window.maxMessages`), as the options name it.
 */
export function checkConfigRules(config: unknown): void {
  checkField(config, 'options', objectCheck(RULES, ''));
}
