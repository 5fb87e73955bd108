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
