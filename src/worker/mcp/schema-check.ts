import { Validator } from '@cfworker/json-schema';
import { realTimers, type Timers } from '../../timing/timers';
import { collectPatterns, compilePatterns, type PatternMatcher } from './linear-patterns';

/** How long one check of a value against an untrusted schema may take. */
export const SCHEMA_CHECK_MS = 200;
/** Reads of the schema or the value between two looks at the clock. */
const READS_PER_CLOCK_LOOK = 1_024;
/** The most work one pattern match may take: the string's length times the pattern's. */
const MAX_MATCH_WORK = 10_000_000;
/** The longest list of problems a verdict carries (a failing schema can report thousands). */
const MAX_MESSAGE_CHARS = 1_000;

/** What checking a value against a schema found. */
export type SchemaVerdict =
  | { readonly outcome: 'valid' }
  | { readonly outcome: 'invalid'; readonly message: string }
  /** The check could not finish: over its time bound, or the schema is broken. */
  | { readonly outcome: 'refused'; readonly message: string };

/** Checks one value; synchronous, and never longer than its time bound. */
export type SchemaCheck = (value: unknown) => SchemaVerdict;

/** A schema made ready to check values, or why it cannot be. */
export type PreparedCheck =
  | { readonly ok: true; readonly check: SchemaCheck }
  | { readonly ok: false; readonly reason: string };

/** Options of `prepareSchemaCheck`; tests pass a clock of their own. */
export interface SchemaCheckOptions {
  readonly budgetMs?: number;
  readonly now?: Timers['now'];
}

/**
 * Keywords whose values are data, compared with values (`enum`, `const`) or never checked
 * (`default`): their `format` keys are kept. The validator never indexes them, so no `$ref`
 * can make them schemas.
 */
const DATA_KEYWORDS: ReadonlySet<PropertyKey> = new Set(['enum', 'const', 'default']);

/** Thrown inside a check when its time is up; caught by the check itself. */
const OVER_BUDGET = Symbol('over budget');

/**
 * Prepares the checks of values against a JSON Schema that Airlock did not write (an MCP
 * server's input and output schemas), so that no schema can freeze the agent worker:
 *
 * - patterns run on a linear-time engine (see `compilePatterns`); a schema with a pattern
 *   that engine cannot express is refused here, before its tool is offered;
 * - every read the validator makes of the schema or the value counts, and past
 *   `budgetMs` the check ends `refused` (a schema whose `allOf`s refer twice to the next
 *   level doubles the work at each level, with no pattern at all);
 * - `format` is an annotation, as JSON Schema 2020-12 makes it by default: the validator's
 *   own format expressions backtrack (its `url` does, on a value the server sends).
 *
 * The validator is @cfworker/json-schema (no code generation, so a strict CSP is no
 * obstacle). It compiles patterns with the global `RegExp`; for the length of one
 * synchronous check that global is a stand-in that hands out the linear-time matchers
 * compiled here and refuses any other pattern.
 */
export async function prepareSchemaCheck(
  schema: unknown,
  options: SchemaCheckOptions = {},
): Promise<PreparedCheck> {
  const compiled = await compilePatterns(collectPatterns(schema));
  if (!compiled.ok) return compiled;
  if (compiled.matchers.size > 0 && !linearEngineTakesEffect()) {
    return { ok: false, reason: 'its patterns cannot be checked in linear time in this build' };
  }
  const now = options.now ?? realTimers.now;
  const budgetMs = options.budgetMs ?? SCHEMA_CHECK_MS;
  const meter = new ReadMeter();
  let validator: Validator;
  try {
    // A copy: the proxies below may hand out other values than the schema holds, which a
    // frozen object forbids; the validator also marks the objects it indexes.
    validator = new Validator(meter.schema(structuredClone(schema)) as never, '2020-12', true);
  } catch (error) {
    return { ok: false, reason: `its schema is not usable (${describe(error)})` };
  }
  const check: SchemaCheck = (value) => {
    meter.start(now, budgetMs);
    try {
      const instance = meter.value(typeof value === 'object' ? structuredClone(value) : value);
      const result = withLinearPatterns(compiled.matchers, () => validator.validate(instance));
      if (result.valid) return { outcome: 'valid' };
      const problems = result.errors.map((error) => `${error.instanceLocation}: ${error.error}`);
      return { outcome: 'invalid', message: cut(problems.join('; ')) };
    } catch (error) {
      if (error === OVER_BUDGET) {
        return { outcome: 'refused', message: `the check took longer than ${budgetMs} ms` };
      }
      return { outcome: 'refused', message: `the check failed (${cut(describe(error))})` };
    } finally {
      meter.stop();
    }
  };
  return { ok: true, check };
}

/**
 * Wraps a schema and a value in proxies that count every read the validator makes and,
 * every `READS_PER_CLOCK_LOOK` reads of a running check, look at the clock. The schema's
 * proxies also hide `format` strings (see `prepareSchemaCheck`), except in data; a value's
 * are plain.
 */
class ReadMeter {
  #reads = 0;
  #deadline = Number.POSITIVE_INFINITY;
  #now: Timers['now'] = realTimers.now;
  readonly #schemaProxies = new WeakMap<object, object>();
  readonly #valueProxies = new WeakMap<object, object>();
  readonly #schemaHandler: ProxyHandler<object> = this.#handler(true);
  readonly #valueHandler: ProxyHandler<object> = this.#handler(false);

  schema(target: unknown): unknown {
    return this.#wrap(target, this.#schemaProxies, this.#schemaHandler);
  }

  value(target: unknown): unknown {
    return this.#wrap(target, this.#valueProxies, this.#valueHandler);
  }

  start(now: Timers['now'], budgetMs: number): void {
    this.#now = now;
    this.#reads = 0;
    this.#deadline = now() + budgetMs;
  }

  stop(): void {
    this.#deadline = Number.POSITIVE_INFINITY;
  }

  #read(): void {
    this.#reads += 1;
    if (this.#reads % READS_PER_CLOCK_LOOK === 0 && this.#now() > this.#deadline) throw OVER_BUDGET;
  }

  #wrap(target: unknown, proxies: WeakMap<object, object>, handler: ProxyHandler<object>) {
    if (typeof target !== 'object' || target === null) return target;
    let proxy = proxies.get(target);
    if (!proxy) {
      proxy = new Proxy(target, handler);
      proxies.set(target, proxy);
    }
    return proxy;
  }

  #handler(isSchema: boolean): ProxyHandler<object> {
    return {
      get: (target, key) => {
        this.#read();
        const value: unknown = Reflect.get(target, key);
        if (!isSchema || DATA_KEYWORDS.has(key)) {
          return this.#wrap(value, this.#valueProxies, this.#valueHandler);
        }
        if (key === 'format' && typeof value === 'string') return undefined;
        return this.#wrap(value, this.#schemaProxies, this.#schemaHandler);
      },
      has: (target, key) => {
        this.#read();
        return Reflect.has(target, key);
      },
      ownKeys: (target) => {
        this.#read();
        return Reflect.ownKeys(target);
      },
      getOwnPropertyDescriptor: (target, key) => {
        this.#read();
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    };
  }
}

/**
 * Runs `validate` with the global `RegExp` replaced by a stand-in whose instances match
 * with the given linear-time matchers; restored before it returns, so nothing else ever
 * sees the stand-in (the validator is synchronous, and so is all that runs meanwhile).
 */
function withLinearPatterns<T>(
  matchers: ReadonlyMap<string, PatternMatcher>,
  validate: () => T,
): T {
  const global = globalThis as { RegExp: unknown };
  const native = global.RegExp;
  global.RegExp = function LinearRegExp(source: unknown) {
    const matcher = typeof source === 'string' ? matchers.get(source) : undefined;
    if (!matcher || typeof source !== 'string') {
      throw new Error('the schema uses a pattern that was not compiled for linear-time matching');
    }
    return {
      test(text: unknown): boolean {
        const input = String(text);
        if (input.length * Math.max(source.length, 1) > MAX_MATCH_WORK) throw OVER_BUDGET;
        return matcher(input);
      },
    };
  };
  try {
    return validate();
  } finally {
    global.RegExp = native;
  }
}

let linearEngineWorks: boolean | undefined;

/**
 * Whether the validator's `new RegExp` reaches the stand-in (a bundler could in theory
 * bind the global differently): without it, patterns would run on the backtracking engine,
 * so schemas with patterns are refused instead. Found out once, on a schema of its own.
 */
function linearEngineTakesEffect(): boolean {
  if (linearEngineWorks === undefined) {
    let reached = false;
    const probe = new Validator({ type: 'string', pattern: 'probe' }, '2020-12', true);
    const matchers = new Map<string, PatternMatcher>([
      [
        'probe',
        () => {
          reached = true;
          return true;
        },
      ],
    ]);
    try {
      withLinearPatterns(matchers, () => probe.validate('probe'));
    } catch {
      reached = false;
    }
    linearEngineWorks = reached;
  }
  return linearEngineWorks;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function cut(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}
