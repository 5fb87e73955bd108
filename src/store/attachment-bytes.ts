// What an attachment's bytes may be, and the encodings they travel in. Shared by a run's
// input (parsed in the agent worker) and an import: both decide what enters the store.

/** Images a vision model takes, by media type, with the bytes their files start with. */
const IMAGE_TYPES: Readonly<Record<string, (bytes: Uint8Array) => boolean>> = {
  'image/png': (bytes) => startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/jpeg': (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]),
  'image/gif': (bytes) => startsWith(bytes, [0x47, 0x49, 0x46, 0x38]),
  'image/webp': (bytes) =>
    startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) &&
    startsWith(bytes.subarray(8), [0x57, 0x45, 0x42, 0x50]),
};

/** Files sent as the API's `file` part: PDF, and text that is valid UTF-8. */
const FILE_TYPES: Readonly<Record<string, (bytes: Uint8Array) => boolean>> = {
  'application/pdf': (bytes) => startsWith(bytes, [0x25, 0x50, 0x44, 0x46, 0x2d]),
  'text/plain': isUtf8,
  'text/markdown': isUtf8,
  'text/csv': isUtf8,
  'application/json': isUtf8,
};

/** The media types an image part may have. */
export const IMAGE_MEDIA_TYPES: readonly string[] = Object.keys(IMAGE_TYPES);
/** The media types a file part may have. */
export const FILE_MEDIA_TYPES: readonly string[] = Object.keys(FILE_TYPES);

/** `image/png; charset=x` → `image/png`. */
export function baseMediaType(mediaType: string): string {
  return mediaType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/**
 * Why bytes cannot be an attachment of this kind and media type, or undefined when they
 * can: the type must be one a model takes, and the bytes must be of that type (a file named
 * `.png` holding HTML is refused, not stored).
 */
export function attachmentProblem(
  kind: 'image' | 'file',
  mediaType: string,
  bytes: Uint8Array,
): string | undefined {
  const checks = kind === 'image' ? IMAGE_TYPES : FILE_TYPES;
  const check = Object.hasOwn(checks, mediaType) ? checks[mediaType] : undefined;
  if (!check)
    return `"${mediaType}" is not a media type ${kind === 'image' ? 'an image' : 'a file'} may have (${Object.keys(checks).join(', ')})`;
  if (!check(bytes)) return `its bytes are not ${mediaType}`;
  return undefined;
}

/** The kind of attachment a media type makes, if any. */
export function attachmentKind(mediaType: string): 'image' | 'file' | undefined {
  if (Object.hasOwn(IMAGE_TYPES, mediaType)) return 'image';
  if (Object.hasOwn(FILE_TYPES, mediaType)) return 'file';
  return undefined;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.length <= bytes.length && prefix.every((byte, index) => bytes[index] === byte);
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The SHA-256 of `bytes`, as 64 lowercase hex digits: the key an attachment is stored under. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as BufferSource));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** A SHA-256 in the form `sha256Hex` writes. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Bytes as base64 (in slices: one `String.fromCharCode` call takes a bounded argument list). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const slice = 0x8000;
  for (let start = 0; start < bytes.length; start += slice)
    binary += String.fromCharCode(...bytes.subarray(start, start + slice));
  return btoa(binary);
}

/** Base64 as bytes; undefined when it is not base64. */
export function fromBase64(text: string): Uint8Array | undefined {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** The largest base64 text that decodes to at most `bytes` bytes. */
export function base64Chars(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/** A `data:` URL of `bytes`, as the model API takes images and files. */
export function toDataUrl(mediaType: string, bytes: Uint8Array): string {
  return `data:${mediaType};base64,${toBase64(bytes)}`;
}

/**
 * A base64 `data:` URL's media type and bytes; undefined when it is not one (only base64
 * data URLs are read: they are what `FileReader.readAsDataURL` and canvases produce).
 */
export function parseDataUrl(url: string): { mediaType: string; bytes: Uint8Array } | undefined {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0) return undefined;
  const header = url.slice(5, comma);
  if (!/;base64$/i.test(header)) return undefined;
  const bytes = fromBase64(url.slice(comma + 1));
  if (!bytes) return undefined;
  return { mediaType: baseMediaType(header.replace(/;base64$/i, '')), bytes };
}
