/** Where a model's weights are while it gets ready: told through `ModelCallOptions.onLoad`. */
export interface ModelLoadProgress {
  readonly model: string;
  readonly phase: 'checking' | 'downloading' | 'loading' | 'ready';
  readonly loadedBytes?: number;
  readonly totalBytes?: number;
  readonly fraction?: number;
  readonly cached?: boolean;
}
