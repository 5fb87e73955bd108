/** The names of the built-in memory tools (`memory-tools.ts`, loaded when an agent has them). */
export const MEMORY_TOOL_NAMES = ['save_memory', 'recall_memories', 'forget_memory'];
