import type { RunRecord } from '../protocol/memory';
import { canonicalJson } from './canonical-json';
import type { ConversationStore } from './store';

// A run row is authority: its allowlist and its waiting calls say what a resume may run. Rows
// live in IndexedDB, where other versions of the app, other tabs and any same-origin script
// can write, so the agent worker seals each row it writes with a key that code of the origin
// can use but never read (a non-extractable CryptoKey in its own row), and resumes only from
// a row whose seal holds. An unkeyed digest would stop only writers who do not know the
// format, and the format is public.

const ALGORITHM: HmacKeyGenParams & { readonly hash: string } = { name: 'HMAC', hash: 'SHA-256' };

/** The seal's format: a version, then the HMAC-SHA-256 in hex. */
const SEAL_PATTERN = /^v1\.([0-9a-f]{64})$/;

/** What is signed: the format's name before the row, so the key signs nothing else alike. */
const SEALED_PREFIX = 'airlock.run-seal.v1\n';

/** What a stored run row's seal says of it. */
export type SealVerdict =
  /** The seal is this database's over the row as it is. */
  | 'sealed'
  /** The row has no seal: stored before seals existed, or its seal was removed. */
  | 'unsealed'
  /** The seal does not hold: the row or its seal was changed, or copied from another run. */
  | 'altered'
  /** Seals cannot be checked here: `crypto.subtle` is missing outside secure contexts. */
  | 'uncheckable';

/** Makes a key to seal run rows with: HMAC-SHA-256, never extractable. */
export function newRunSealKey(): Promise<CryptoKey> {
  return crypto.subtle.generateKey(ALGORITHM, false, ['sign', 'verify']);
}

/**
 * Whether `value` (read back from a store) is a key `newRunSealKey` could have made: an
 * HMAC-SHA-256 key for signing and verifying that cannot be extracted.
 */
export function isRunSealKey(value: unknown): value is CryptoKey {
  if (typeof CryptoKey !== 'function' || !(value instanceof CryptoKey)) return false;
  const algorithm = value.algorithm as Partial<HmacKeyAlgorithm>;
  return (
    algorithm.name === ALGORITHM.name &&
    algorithm.hash?.name === ALGORITHM.hash &&
    !value.extractable &&
    value.usages.includes('sign') &&
    value.usages.includes('verify')
  );
}

/**
 * Seals the run rows an agent worker writes and checks those it resumes from, with its
 * store's run seal key (read once, when first needed).
 */
export class RunSeal {
  readonly #readKey: () => Promise<CryptoKey>;
  #key: Promise<CryptoKey> | undefined;

  constructor(readKey: () => Promise<CryptoKey>) {
    this.#readKey = readKey;
  }

  /**
   * `run` with its seal over every other field. Where `crypto.subtle` is missing, or the row
   * is beyond what `canonicalJson` encodes (tens of megabytes), it is written without one: it
   * is kept, and never resumed (see `check`).
   */
  async sealed(run: RunRecord): Promise<RunRecord> {
    const { seal: _old, ...fields } = run;
    const text = canSeal() ? sealedText(fields) : undefined;
    if (text === undefined) return fields;
    const mac = await crypto.subtle.sign(ALGORITHM.name, await this.#keyOnce(), encode(text));
    return { ...fields, seal: `v1.${toHex(new Uint8Array(mac))}` };
  }

  /** What the seal of a stored row (shape checked) says of it. */
  async check(run: RunRecord): Promise<SealVerdict> {
    // Without crypto.subtle every row is written unsealed: say why, whatever the row holds.
    if (!canSeal()) return 'uncheckable';
    const { seal, ...fields } = run;
    if (seal === undefined) return 'unsealed';
    const mac = SEAL_PATTERN.exec(seal)?.[1];
    const text = sealedText(fields);
    if (mac === undefined || text === undefined) return 'altered';
    const holds = await crypto.subtle.verify(
      ALGORITHM.name,
      await this.#keyOnce(),
      fromHex(mac),
      encode(text),
    );
    return holds ? 'sealed' : 'altered';
  }

  /**
   * `run` changed by `patch`, sealed only if the stored `run` was: a row another writer
   * changed (or that was never sealed) keeps the seal it had, which does not hold for the new
   * row either, so no write of the agent worker ever vouches for a row it did not write.
   */
  async amended(run: RunRecord, patch: Partial<RunRecord>): Promise<RunRecord> {
    const changed = { ...run, ...patch };
    return (await this.check(run)) === 'sealed' ? this.sealed(changed) : changed;
  }

  /**
   * The store's `commitStep` and `putRun` with each run row sealed (and `refuseRun`), handed to the store in
   * the order they were called: sealing takes a moment, and an earlier checkpoint must never
   * land after a later one.
   */
  writes(store: ConversationStore): Pick<ConversationStore, 'commitStep' | 'putRun' | 'refuseRun'> {
    let handed: Promise<unknown> = Promise.resolve();
    const inOrder = <T>(run: RunRecord | undefined, write: (run?: RunRecord) => Promise<T>) => {
      // The write's promise is wrapped, so the queue waits for its start, not its end.
      const started = handed.then(async () => ({
        done: write(run === undefined ? undefined : await this.sealed(run)),
      }));
      // A seal that failed (the key could not be read) is its caller's to report; later
      // writes still go, in order.
      handed = started.catch(() => undefined);
      return started.then(({ done }) => done);
    };
    return {
      commitStep: (step) =>
        inOrder(step.run, (run) => store.commitStep({ ...step, ...(run ? { run } : {}) })),
      putRun: (run) => inOrder(run, (sealed) => store.putRun(sealed ?? run)),
      // No run row to seal; in the queue, so it lands after the run's last step.
      refuseRun: (conversationId, runId) =>
        inOrder(undefined, () => store.refuseRun(conversationId, runId)),
    };
  }

  /** Starts reading the key now, so the first run does not wait for it; a failure is met by the next use. */
  prepare(): void {
    if (canSeal()) this.#keyOnce().catch(() => undefined);
  }

  /** The key, read once (a failed read is tried again by the next use). */
  #keyOnce(): Promise<CryptoKey> {
    this.#key ??= this.#readKey().catch((error: unknown) => {
      this.#key = undefined;
      throw error;
    });
    return this.#key;
  }
}

/** What a row's seal signs: every field but the seal, as canonical JSON after the format's name. */
function sealedText(fields: Omit<RunRecord, 'seal'>): string | undefined {
  const json = canonicalJson(fields);
  return json === undefined ? undefined : SEALED_PREFIX + json;
}

function canSeal(): boolean {
  return typeof crypto === 'object' && typeof crypto.subtle === 'object';
}

function encode(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text);
}

function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let index = 0; index < bytes.length; index++)
    bytes[index] = Number.parseInt(hex.slice(index * 2, index * 2 + 2), 16);
  return bytes;
}
