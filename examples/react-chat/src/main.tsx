import { loadChatMessages } from 'airlock-agents/ai-sdk';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { agent, CHAT_ID } from './agent';
import './style.css';

// What was said before a reload is in IndexedDB: it becomes the chat's first messages.
const initialMessages = await loadChatMessages(agent, CHAT_ID);

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App initialMessages={initialMessages} />
  </StrictMode>,
);
