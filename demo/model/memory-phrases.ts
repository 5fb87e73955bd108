/**
 * How the offline model reads requests about long-term memory: "remember that …" and
 * "note …" become a `save_memory` call, "what do you remember" a `recall_memories` call.
 */

/** A fact to save, as `save_memory` takes it. */
export interface FactToSave {
  /** A short label, e.g. `favourite-colour`. */
  readonly key: string;
  /** The fact in the third person, so it reads right in later instructions. */
  readonly content: string;
}

const REMEMBER = /^\s*(?:please\s+)?(?:remember|note(?:\s+down)?)(?:\s+that)?\s*[:,-]?\s+(.+)$/is;
const RECALL =
  /\b(?:what\s+do\s+you\s+(?:remember|know|recall)|what\s+have\s+you\s+(?:noted|remembered|saved)|recall|your\s+memories)\b/i;
const RECALL_TOPIC = /\babout\s+([^?!.]+)/i;
/** "my X is Y": the subject names the memory. */
const MY_SUBJECT = /^my\s+(.+?)\s+(?:is|are|was|were)\s+\S/i;
/** Words dropped from a recall topic: they are in the question, not in what was saved. */
const TOPIC_FILLER = new Set(['me', 'my', 'mine', 'i', 'the', 'a', 'an', 'of', 'about', 'it']);
const KEY_WORDS = 4;

/** The fact of "remember that my favourite colour is green", or `undefined` when it is not one. */
export function findFactToSave(message: string): FactToSave | undefined {
  const fact = REMEMBER.exec(message)?.[1]
    ?.trim()
    .replace(/[\s.!]+$/, '');
  if (fact === undefined || fact === '') return undefined;
  const subject = MY_SUBJECT.exec(fact)?.[1];
  const key = slug(subject ?? fact.split(/\s+/).slice(0, KEY_WORDS).join(' '));
  return { key: key === '' ? 'note' : key, content: toThirdPerson(fact) };
}

/**
 * Whether `message` asks what the agent remembers, and the words to look for
 * ("what do you remember about my favourite colour" → `favourite colour`).
 */
export function findRecallQuery(message: string): { query?: string } | undefined {
  if (!RECALL.test(message)) return undefined;
  const topic = RECALL_TOPIC.exec(message)?.[1] ?? '';
  const words = topic
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '' && !TOPIC_FILLER.has(word));
  return words.length > 0 ? { query: words.join(' ') } : {};
}

/** "my name is Ada" → "The user's name is Ada": the model reads memories as facts about the user. */
function toThirdPerson(fact: string): string {
  const rewritten = fact
    .replace(/^my\b/i, "The user's")
    .replace(/^(?:i am|i'm)\b/i, 'The user is')
    .replace(/^i\b/i, 'The user')
    .replace(/\bmy\b/gi, "the user's");
  return rewritten.charAt(0).toUpperCase() + rewritten.slice(1);
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
}
