import type { Agent } from '../page/create-agent';
import type { ConversationExport } from '../protocol/memory';

/**
 * Makes the stored conversation agree with the chat before a new run: when the chat holds
 * fewer user turns than the store (a regenerated answer, an edited earlier message), the
 * stored turns from the `userTurns`-th user message on are cut, so the run answers the
 * chat the user sees. Rewritten in one import (`replace`), so a failure changes nothing.
 * Resolves with how many messages were cut.
 */
export async function cutHistoryToTurns(
  agent: Agent,
  conversationId: string,
  userTurns: number,
): Promise<number> {
  const detail = await agent.memory.getConversation(conversationId);
  if (!detail) return 0;
  const users = detail.messages.filter((record) => record.message.role === 'user');
  // The new message is turn `userTurns`: the store holds the turns before it, no more.
  const firstCut = users[userTurns - 1];
  if (!firstCut) return 0;
  const cutSeq = firstCut.seq;
  const stored = JSON.parse(
    await agent.memory.exportConversation(conversationId),
  ) as ConversationExport;
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
  await agent.memory.importConversation(JSON.stringify(cut), {
    replace: true,
    allowSystemMessages: true,
  });
  return stored.messages.length - kept.length;
}
