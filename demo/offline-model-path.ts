/** Where the dev server mounts the offline demo model; the page's default base URL. */
export const OFFLINE_MODEL_PATH = '/llm/v1';

/** The model name the page asks the offline model for; the proxy serves real names instead. */
export const OFFLINE_MODEL_NAME = 'airlock-offline';
