import { AirlockError } from '../errors/airlock-error';
import { type FieldCheck, invalidField, isRecord } from '../errors/field-checks';
import type { JsonSchema } from '../protocol/tools';

/**
 * The parts of Standard Schema (validation) and Standard JSON Schema (conversion) that a
 * tool's parameters must implement. zod 4 schemas do both, as do other libraries that
 * follow the standard, so the page never has to import a schema library itself.
 */
export interface ToolSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => ValidationResult<Output> | Promise<ValidationResult<Output>>;
    readonly jsonSchema: {
      readonly input: (options: { readonly target: 'draft-07' }) => Record<string, unknown>;
    };
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

/** The outcome of validating a value against a `ToolSchema`. */
export type ValidationResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly ValidationIssue[] };

/** One reason a value failed validation. */
export interface ValidationIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The type a schema produces once validation succeeds. */
export type InferSchemaOutput<S extends ToolSchema> = NonNullable<
  S['~standard']['types']
>['output'];

/** Renders validation issues as one line a model can act on: `city: Required; days: Too big`. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) => {
      const path = (issue.path ?? [])
        .map((segment) => String(typeof segment === 'object' ? segment.key : segment))
        .join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/** A `ToolSchema`: a Standard Schema that also converts itself to JSON Schema. */
export const schemaCheck: FieldCheck = (value, field, code) => {
  const standard = isRecord(value) ? value['~standard'] : undefined;
  const usable =
    isRecord(standard) &&
    typeof standard.validate === 'function' &&
    isRecord(standard.jsonSchema) &&
    typeof standard.jsonSchema.input === 'function';
  if (!usable)
    throw invalidField(
      field,
      'a Standard Schema with JSON Schema support (`~standard.validate` and `~standard.jsonSchema`), e.g. a zod 4 object',
      code,
    );
};

/** Each schema's JSON Schema, converted once: tools defined for every run reuse their schemas. */
const converted = new WeakMap<ToolSchema, JsonSchema>();

/**
 * The JSON Schema of an object schema, made once per schema by the schema library's own
 * converter, and frozen, since the same object serves every tool defined with that schema.
 * `invalid-options` naming `field` when it cannot be converted or is not an object.
 */
export function objectJsonSchema(schema: ToolSchema, field: string, label: string): JsonSchema {
  const known = converted.get(schema);
  if (known) return known;
  const jsonSchema = deepFreeze(convertObjectSchema(schema, field, label));
  converted.set(schema, jsonSchema);
  return jsonSchema;
}

function convertObjectSchema(schema: ToolSchema, field: string, label: string): JsonSchema {
  let converted: JsonSchema;
  try {
    const { $schema: _dialect, ...rest } = schema['~standard'].jsonSchema.input({
      target: 'draft-07',
    });
    converted = rest;
  } catch (error) {
    throw new AirlockError('invalid-options', `${label} cannot be converted to JSON Schema.`, {
      cause: error,
      details: { field },
    });
  }
  if (converted.type !== 'object') {
    throw new AirlockError(
      'invalid-options',
      `${label} must be an object schema (got type ${JSON.stringify(converted.type)}).`,
      { details: { field } },
    );
  }
  return converted;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
