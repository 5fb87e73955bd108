import type { ToolErrorCode } from '../protocol/errors';

/** The tool error codes a tool may fail with on purpose, besides the `tool-failed` of a plain throw. */
export type ToolFaultCode = Extract<
  ToolErrorCode,
  'tool-failed' | 'tool-timeout' | 'tool-memory-limit'
>;

/**
 * Thrown by a tool whose failure has a more precise code than `tool-failed`: a code tool
 * whose script was interrupted at its deadline, or went over its memory limit. The code
 * reaches the model and the `tool-result` event as it is.
 */
export class ToolFault extends Error {
  override readonly name = 'ToolFault';
  readonly code: ToolFaultCode;

  constructor(code: ToolFaultCode, message: string) {
    super(message);
    this.code = code;
  }
}
