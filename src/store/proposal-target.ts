import { AirlockError } from '../errors/airlock-error';
import type { MemoryProposal, MemoryRecord } from '../protocol/memory';
import { canonicalJson } from './canonical-json';

/** A proposal to delete a memory, checked for its table's shape. */
type DeleteProposal = Extract<MemoryProposal, { readonly change: 'delete' }>;

/**
 * The memory accepting a delete proposal deletes: the one stored under the id it shows, only
 * while it is still the memory it shows, every field alike (the user agreed to delete what was
 * shown); `undefined` when it is gone (already deleted is no fault). A stored memory that
 * differs (changed since the proposal was made, or the row names another memory's id) is
 * `proposal-outdated`: nothing is applied.
 */
export function memoryToDelete(
  proposal: DeleteProposal,
  stored: MemoryRecord | undefined,
): MemoryRecord | undefined {
  if (stored === undefined) return undefined;
  const shown = canonicalJson(proposal.memory);
  if (shown !== undefined && shown === canonicalJson(stored)) return stored;
  throw new AirlockError(
    'proposal-outdated',
    `The memory proposal ${proposal.id} shows a memory that is not the one stored under id ${proposal.memory.id} (it changed since the proposal was made): nothing was deleted. Dismiss the proposal.`,
    { details: { proposalId: proposal.id, memoryId: proposal.memory.id } },
  );
}
