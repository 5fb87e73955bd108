import type { Transaction } from 'dexie';
import { estimateMessageTokens } from '../../model/estimate-tokens';
import type { KnowledgeChunkText } from '../../protocol/knowledge';
import { termRows } from '../rules/message-terms';
import type { MessageRecord } from '../store';
import type { MessageTermsRecord } from '../tables/table-adapter';
import {
  type BlockVector,
  codesOfBlock,
  packVectorBlocks,
  parseVectorBlock,
  type VectorBlockRecord,
  type VectorCodesRecord,
} from '../vector-blocks';

// The upgrades between schema versions (`../schema-versions.ts`), run by Dexie when it opens
// a database stored at an older version. Like the versions, an upgrade is never edited once
// shipped.

/** A message row as version 1 stored it: no token count yet. */
type MessageRowV1 = Omit<MessageRecord, 'approxTokens'> & { approxTokens?: number };

/** Fills in `approxTokens` on messages stored by version 1. */
export function backfillTokenCounts(transaction: Transaction): PromiseLike<unknown> {
  return transaction
    .table<MessageRowV1, [string, number]>('messages')
    .toCollection()
    .modify((row) => {
      if (row.approxTokens === undefined) row.approxTokens = estimateMessageTokens(row.message);
    });
}

/** A chunk row as versions 3 and 4 stored it: with its vector. */
type ChunkRowV4 = KnowledgeChunkText & { vector?: unknown };

/**
 * Moves every chunk's vector into packed blocks, in key order (each document's chunks
 * together), and leaves the chunk rows their text. A vector that is not a `Float32Array`
 * could not be searched before either: it is dropped, and its chunk stays readable.
 */
export async function packChunkVectors(transaction: Transaction): Promise<void> {
  const moved: BlockVector[] = [];
  await transaction
    .table<ChunkRowV4, [string, number]>('chunks')
    .toCollection()
    .modify((row) => {
      if (row.vector instanceof Float32Array)
        moved.push({ docId: row.docId, index: row.index, vector: row.vector });
      delete row.vector;
    });
  await transaction
    .table<VectorBlockRecord, number>('vectorBlocks')
    .bulkAdd(packVectorBlocks(moved));
}

/** Indexes the words of every message stored before version 6 (reading one row at a time). */
export async function indexMessageTerms(transaction: Transaction): Promise<void> {
  const rows: MessageTermsRecord[] = [];
  await transaction
    .table<MessageRecord, [string, number]>('messages')
    .each((record) => rows.push(...termRows([record])));
  await transaction.table<MessageTermsRecord, [string, number]>('messageTerms').bulkAdd(rows);
}

/** Writes the int8 copy of every valid block stored before version 7 (one block at a time). */
export async function copyVectorCodes(transaction: Transaction): Promise<void> {
  const copies: VectorCodesRecord[] = [];
  await transaction.table<VectorBlockRecord, number>('vectorBlocks').each((row, cursor) => {
    const parsed = parseVectorBlock(row);
    if ('block' in parsed) copies.push(codesOfBlock(cursor.primaryKey, parsed.block));
  });
  await transaction.table<VectorCodesRecord, number>('vectorCodes').bulkAdd(copies);
}
