/**
 * Airlock for the Vercel AI SDK's chat UIs: `AirlockChatTransport` makes `useChat` and
 * `Chat` run an Airlock agent, and `loadChatMessages` turns a stored conversation into
 * their initial messages. Needs the `ai` package (an optional peer dependency); the page
 * entry `airlock-agents` never imports it.
 */

export type { RunObserver } from './ai-sdk/chat-session';
export { AirlockChatTransport, type AirlockChatTransportOptions } from './ai-sdk/chat-transport';
export { EventChunkMapper } from './ai-sdk/event-chunks';
export type { AirlockDataParts, AirlockMessageMetadata } from './ai-sdk/message-parts';
export { type AirlockUIMessage, loadChatMessages, toUIMessages } from './ai-sdk/stored-messages';
