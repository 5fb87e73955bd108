import type { ToolImage, ToolOutcome } from '../../protocol/tools';
import { MAX_TOOL_IMAGE_CHARS, MAX_TOOL_IMAGES } from '../../tools/run-tool';
import { toolFailure } from '../../tools/tool-failure';

/** One content block of an MCP tool result, as far as it is read here. */
interface ContentBlock {
  readonly type: string;
  readonly text?: unknown;
  readonly data?: unknown;
  readonly mimeType?: unknown;
  readonly uri?: unknown;
  readonly name?: unknown;
  readonly resource?: {
    readonly uri?: unknown;
    readonly mimeType?: unknown;
    readonly text?: unknown;
    readonly blob?: unknown;
  };
}

/** An MCP `tools/call` result, after the SDK checked its shape. */
export interface McpCallResult {
  readonly content?: readonly ContentBlock[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
}

/**
 * What an MCP result becomes: structured content goes as its JSON, text blocks as their
 * text, and anything else as a JSON list of blocks in which binary data (images, audio,
 * blobs) is described by its type and size, not inlined: a tool message carries text
 * only, and base64 would spend the output cap on noise. Image blocks also travel as the
 * tool's images (within the same caps as a page tool's), which the model is sent in a
 * user message after the step's tool results. `isError` results are tool failures the
 * model can read.
 */
export function mcpOutcome(toolName: string, result: McpCallResult): ToolOutcome {
  const blocks = result.content ?? [];
  if (result.isError === true) {
    const text = blocks
      .map((block) => (typeof block.text === 'string' ? block.text : ''))
      .filter(Boolean)
      .join('\n');
    return toolFailure(
      'tool-failed',
      `Tool "${toolName}" reported an error: ${text || 'no detail given'}`,
    );
  }
  if (result.structuredContent !== undefined) {
    return {
      ok: true,
      output: result.structuredContent,
      content: JSON.stringify(result.structuredContent),
    };
  }
  if (blocks.every((block) => block.type === 'text' && typeof block.text === 'string')) {
    const text = blocks.map((block) => block.text as string).join('\n');
    return { ok: true, output: text, content: text };
  }
  const output = blocks.map(describeBlock);
  const images = imagesOf(blocks);
  return {
    ok: true,
    output,
    content: JSON.stringify(output),
    ...(images.length > 0 ? { images } : {}),
  };
}

/** The image blocks a model can be sent: base64 data of an image type, within the caps. */
function imagesOf(blocks: readonly ContentBlock[]): ToolImage[] {
  const images: ToolImage[] = [];
  for (const block of blocks) {
    if (images.length === MAX_TOOL_IMAGES) break;
    const { type, mimeType, data } = block;
    if (
      type === 'image' &&
      typeof mimeType === 'string' &&
      mimeType.startsWith('image/') &&
      typeof data === 'string' &&
      data.length <= MAX_TOOL_IMAGE_CHARS
    )
      images.push({ type: 'image', mediaType: mimeType, data });
  }
  return images;
}

function describeBlock(block: ContentBlock): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, mimeType: block.mimeType, bytes: base64Bytes(block.data) };
    case 'resource': {
      const resource = block.resource ?? {};
      return {
        type: 'resource',
        uri: resource.uri,
        ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType }),
        ...(typeof resource.text === 'string'
          ? { text: resource.text }
          : { bytes: base64Bytes(resource.blob) }),
      };
    }
    case 'resource_link':
      return {
        type: 'resource_link',
        uri: block.uri,
        name: block.name,
        ...(block.mimeType === undefined ? {} : { mimeType: block.mimeType }),
      };
    default:
      return { type: block.type };
  }
}

/** The decoded size of base64 text, without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
