/** Where the dev server mounts the offline demo model; the page's default base URL. */
export const OFFLINE_MODEL_PATH = '/llm/v1';
