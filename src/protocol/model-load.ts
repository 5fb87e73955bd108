/**
 * How far a model's engine or weights have loaded, told while a model call waits for them:
 * an on-device model (Chrome's Prompt API, a WebAssembly engine) may need to download and
 * load gigabytes before its first answer. Told in order per call: `checking` (asking whether
 * the model is there), `downloading` (weights arriving, as often as the engine reports),
 * `loading` (into memory), `ready` (the call goes on). A model already loaded may tell
 * only `ready`, or nothing at all.
 */
export interface ModelLoadProgress {
  /** The model loading (the adapter's model name, or the page model's name). */
  readonly model: string;
  readonly phase: 'checking' | 'downloading' | 'loading' | 'ready';
  /** Bytes arrived so far, where the engine counts bytes (the Prompt API reports a fraction only). */
  readonly loadedBytes?: number;
  /** Bytes in all, where the engine knows it. */
  readonly totalBytes?: number;
  /** Share loaded, from 0 to 1 (the Prompt API's `downloadprogress` `loaded`). */
  readonly fraction?: number;
  /** The weights were on the device already (no download was needed). */
  readonly cached?: boolean;
}
