/**
 * OpenTelemetry traces of Airlock runs, following the GenAI semantic conventions: a span
 * per run, per model call and per tool call, sent through the app's own tracer. Needs
 * `@opentelemetry/api` (an optional peer dependency); the page entry never imports it.
 */
export { createTracing, type RunTracing, type TracingOptions, traceRun } from './otel/run-spans';
