import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import { isQuotaExceededError, toStorageError } from '../../../src/store/storage-errors';

describe('mapping storage failures', () => {
  it('maps a QuotaExceededError DOMException to storage-full', () => {
    const quota = new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    const error = toStorageError(quota, 'saving a step');
    expect(error).toBeInstanceOf(AirlockError);
    expect(error).toMatchObject({
      code: 'storage-full',
      cause: quota,
      details: { operation: 'saving a step' },
    });
    expect(error.message).toMatch(/refused to store more data while saving a step/);
  });

  it('maps Dexie quota errors, and Dexie errors wrapping one in `inner` or `failures`, to storage-full', () => {
    const quota = new DOMException('full', 'QuotaExceededError');
    expect(toStorageError(new Dexie.QuotaExceededError('full', quota), 'x').code).toBe(
      'storage-full',
    );
    expect(toStorageError(new Dexie.AbortError('aborted', quota), 'x').code).toBe('storage-full');
    const bulk = new Dexie.BulkError('1 of 2 failed', { 1: quota });
    expect(toStorageError(bulk, 'x').code).toBe('storage-full');
  });

  it('recognises quota errors by name, so an error from another realm counts too', () => {
    expect(isQuotaExceededError({ name: 'QuotaExceededError', message: 'from an iframe' })).toBe(
      true,
    );
    expect(
      isQuotaExceededError({ name: 'AbortError', inner: { name: 'NS_ERROR_DOM_QUOTA_REACHED' } }),
    ).toBe(true);
    expect(isQuotaExceededError({ name: 'AbortError', inner: { name: 'ConstraintError' } })).toBe(
      false,
    );
    expect(isQuotaExceededError('QuotaExceededError')).toBe(false);
  });

  it('maps any other failure to storage-failed, keeping it as the cause', () => {
    const plain = new Error('disk on fire');
    expect(toStorageError(plain, 'reading a run')).toMatchObject({
      code: 'storage-failed',
      message: 'Storage failed while reading a run: Error: disk on fire',
      cause: plain,
    });
    const closed = new Dexie.DatabaseClosedError();
    expect(toStorageError(closed, 'x')).toMatchObject({
      code: 'storage-failed',
      details: { name: 'DatabaseClosedError' },
    });
    expect(toStorageError('a string', 'x').message).toBe('Storage failed while x: a string');
  });

  it('passes an AirlockError through unchanged', () => {
    const notFound = new AirlockError('not-found', 'No conversation with id "c".');
    expect(toStorageError(notFound, 'x')).toBe(notFound);
  });
});
