/** Options of `pageModel`. */
export interface PageModelOptions {
  /** The model's name in events and errors; the page model's name when absent. */
  readonly name?: string;
  /** Longest answer taken, in characters (default 1,000,000); past it the call fails `model-stream-malformed`. */
  readonly maxAnswerChars?: number;
}

/** The page's offer (`withPageModels` on the page), once it arrived: the port and the names. */
export interface PageOffer {
  readonly port: MessagePort;
  readonly names: readonly string[];
}
