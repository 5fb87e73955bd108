import type { Agent } from '../page/create-agent';
import type { ConversationExport } from '../protocol/memory';

/**
 * Makes the stored conversation agree with the chat before a new run: when the chat holds
 * fewer user turns than the store (a regenerated answer, an edited earlier message), the
 * stored turns from the `userTurns`-th user message on are cut, so the run answers the
 * chat the user sees. Rewritten in one import (`replace`), so a failure changes nothing.
 * Resolves with a function that puts the cut turns back (for a run that then cannot
 * start), or `undefined` when nothing was cut.
 */
export async function cutHistoryToTurns(
  agent: Agent,
  conversationId: string,
  userTurns: number,
): Promise<(() => Promise<void>) | undefined> {
  const detail = await agent.memory.getConversation(conversationId);
  if (!detail) return undefined;
  const users = detail.messages.filter((record) => record.message.role === 'user');
  // The new message is turn `userTurns`: the store holds the turns before it, no more.
  const firstCut = users[userTurns - 1];
  if (!firstCut) return undefined;
  const cutSeq = firstCut.seq;
  const before = await agent.memory.exportConversation(conversationId);
  const stored = JSON.parse(before) as ConversationExport;
  const kept = stored.messages.filter((record) => record.seq < cutSeq);
  const summaryStands = stored.conversation.summarizedThroughSeq < cutSeq;
  const cut: ConversationExport = {
    ...stored,
    conversation: {
      ...stored.conversation,
      lastSeq: kept.length,
      updatedAt: Date.now(),
      // A summary of messages that are gone would speak of them still.
      ...(summaryStands ? {} : { summary: '', summarizedThroughSeq: 0 }),
    },
    messages: kept,
  };
  // The rows are the store's own, system messages included, written back without the cut turns.
  const options = { replace: true, allowSystemMessages: true };
  await agent.memory.importConversation(JSON.stringify(cut), options);
  return async () => {
    await agent.memory.importConversation(before, options);
  };
}
