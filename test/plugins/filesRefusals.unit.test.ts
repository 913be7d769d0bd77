import { describe, expect, it } from 'vitest';
import { FileOperationFailed, PathOutsideRoots } from '../../plugins/builtin/files/index.ts';
import { refusalFor } from '../../plugins/builtin/files/fsRefusals.ts';

const fsError = (code: string) => Object.assign(new Error(`${code}: raw text, open '/x'`), { code, syscall: 'open' });

describe('refusalFor: a file-system error becomes a typed refusal worded for the model', () => {
  it.each([
    ['EACCES', 'permission denied'],
    ['EPERM', 'operation not permitted'],
    ['ELOOP', 'symlink loop'],
    ['ENAMETOOLONG', 'too long'],
    ['ENOENT', 'does not exist'],
    ['ENXIO', 'not a regular file'],
    ['EMFILE', 'too many files open'],
  ])('%s: says %s, keeps the code as a field, and no raw text', (code, words) => {
    const refusal = refusalFor('notes/a.txt', fsError(code));
    expect(refusal).toBeInstanceOf(FileOperationFailed);
    expect(refusal).toMatchObject({ code: 'FILE_OPERATION_FAILED', errno: code, path: 'notes/a.txt' });
    expect(refusal!.message).toContain(words);
    expect(refusal!.message).toMatch(/^'notes\/a.txt' .+; .+/);
    expect(refusal!.message).not.toContain('raw text');
  });

  it('an errno it has no words for is still typed, naming the code', () => {
    expect(refusalFor('a', fsError('ESTRANGE'))).toMatchObject({
      errno: 'ESTRANGE',
      message: expect.stringContaining('the file system said ESTRANGE'),
    });
  });

  it('passes a typed refusal through and leaves a programming error alone', () => {
    const outside = new PathOutsideRoots('x', ['/r'], 'is elsewhere');
    expect(refusalFor('x', outside)).toBe(outside);
    expect(refusalFor('x', new TypeError('bug'))).toBeUndefined();
  });
});
