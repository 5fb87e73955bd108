// Makes `src/page/agent-config-rules.ts`, the page's copy of the agent worker's option rules,
// from the JSON Schema of the worker's zod schema (`worker/services/config-schema.ts`): the
// rules are declared once, there. test/unit/page/option-rules.test.ts renders it and fails
// while the committed file differs; `npx vitest run --project unit
// test/unit/page/option-rules.test.ts -u` writes it anew.
//
// Every keyword of the schema is either turned into a rule or refused here: a rule the page
// cannot state must not be dropped without a word.

/** The pattern the worker's schema uses for "not blank" (`/\S/`). */
const NON_BLANK = '\\S';

/** Keywords that say nothing the page checks. */
const IGNORED = new Set(['$schema', 'propertyNames', 'additionalProperties']);

/**
 * The key under which an object's rule lists the fields it cannot do without (JSON Schema's
 * `required`); no option is named `!`.
 */
export const REQUIRED_KEY = '!';

/**
 * The rule of one JSON Schema node.
 * @param {Record<string, unknown>} node
 * @param {string} path where it sits, for the error of a keyword it cannot take
 * @returns {unknown}
 */
export function toOptionRule(node, path) {
  /** @param {string} keyword */
  const refuse = (keyword) => {
    throw new Error(`${path || '(root)'}: the page cannot state the schema's "${keyword}"`);
  };
  /** @param {...string} allowed */
  const only = (...allowed) => {
    for (const keyword of Object.keys(node))
      if (!allowed.includes(keyword) && !IGNORED.has(keyword)) refuse(keyword);
  };
  if (node.type === 'object' && node.properties) {
    only('type', 'properties', 'required');
    if (node.additionalProperties !== undefined && node.additionalProperties !== false)
      refuse('additionalProperties');
    const properties = /** @type {Record<string, Record<string, unknown>>} */ (node.properties);
    const required = /** @type {string[]} */ (node.required ?? []).filter((key) =>
      Object.hasOwn(properties, key),
    );
    return {
      ...(required.length ? { [REQUIRED_KEY]: required } : {}),
      ...Object.fromEntries(
        Object.entries(properties).map(([key, item]) => [
          key,
          toOptionRule(item, path ? `${path}.${key}` : key),
        ]),
      ),
    };
  }
  if (node.type === 'object') {
    only('type', 'required');
    if (/** @type {unknown[]} */ (node.required ?? []).length) refuse('required');
    const values = /** @type {Record<string, unknown>} */ (node.additionalProperties ?? {});
    return { '*': Object.keys(values).length ? toOptionRule(values, `${path}.*`) : 'any' };
  }
  if (node.type === 'array') {
    only('type', 'items', 'maxItems');
    const items = /** @type {Record<string, unknown>} */ (node.items ?? {});
    const item = Object.keys(items).length ? toOptionRule(items, `${path}[]`) : 'any';
    return node.maxItems === undefined ? [item] : [item, node.maxItems];
  }
  if (node.type === 'string' && node.enum) {
    only('type', 'enum');
    const values = /** @type {string[]} */ (node.enum);
    if (values.some((value) => /[ |]/.test(value))) refuse('enum with " " or "|"');
    return `enum ${values.join('|')}`;
  }
  if (node.type === 'string' && node.format === 'uri') {
    only('type', 'format');
    return 'url';
  }
  if (node.type === 'string') {
    only('type', 'minLength', 'maxLength', 'pattern');
    const nonBlank = node.pattern === NON_BLANK;
    // A string that must not be empty is said as not blank (`/\S/`) in the worker's schema.
    if (node.minLength !== undefined && !(nonBlank && node.minLength === 1)) refuse('minLength');
    return [
      'str',
      nonBlank ? '!' : undefined,
      node.maxLength === undefined ? undefined : `max:${node.maxLength}`,
      node.pattern === undefined || nonBlank ? undefined : `re:${node.pattern}`,
    ]
      .filter(Boolean)
      .join(' ');
  }
  if (node.type === 'number' || node.type === 'integer') {
    only('type', 'minimum', 'maximum', 'exclusiveMinimum');
    if (node.exclusiveMinimum !== undefined && node.exclusiveMinimum !== 0)
      refuse(`exclusiveMinimum: ${node.exclusiveMinimum}`);
    /** @param {unknown} bound @returns {bound is number} */
    const bounded = (bound) =>
      typeof bound === 'number' && Math.abs(bound) < Number.MAX_SAFE_INTEGER;
    return [
      node.type === 'integer' ? 'int' : 'num',
      node.exclusiveMinimum === 0 ? '>0' : undefined,
      bounded(node.minimum) ? `min:${node.minimum}` : undefined,
      bounded(node.maximum) ? `max:${node.maximum}` : undefined,
    ]
      .filter(Boolean)
      .join(' ');
  }
  if (node.type === 'boolean') {
    only('type');
    return 'bool';
  }
  if (node.type === undefined) return refuse(Object.keys(node).join(', ') || 'no type');
  return refuse(`type: ${JSON.stringify(node.type)}`);
}

/**
 * The source of `agent-config-rules.ts`.
 * @param {Record<string, unknown>} schema the worker schema's JSON Schema (input side)
 * @param {{ omit: readonly string[] }} options top-level fields the page makes itself
 * @returns {string}
 */
export function renderOptionRules(schema, { omit }) {
  const properties = /** @type {Record<string, Record<string, unknown>>} */ (schema.properties);
  const kept = Object.fromEntries(
    Object.entries(properties).filter(([key]) => !omit.includes(key)),
  );
  const rules = toOptionRule({ type: 'object', properties: kept, required: schema.required }, '');
  return [
    "// Made by scripts/option-rules.mjs from the agent worker's schema",
    '// (src/worker/services/config-schema.ts); do not edit. test/unit/page/option-rules.test.ts',
    '// fails while it is stale; run it with `-u` to make it anew.',
    '',
    `export const AGENT_CONFIG_RULES = ${JSON.stringify(rules, null, 2)} as const;`,
    '',
  ].join('\n');
}
