/**
 * A model that turns texts into vectors. The knowledge base knows only this; the one
 * implementation that imports the `openai` package lives in `openai-chat-model.ts`.
 */
export interface EmbeddingModel {
  readonly name: string;
  /**
   * One vector per text, in order, from one request. Throws an `AirlockError` for HTTP and
   * connection failures (after the SDK's retries); when `signal` aborts, rejects at once.
   */
  embed(texts: readonly string[], options: { readonly signal: AbortSignal }): Promise<number[][]>;
}
