/** Database files and data dirs for the bench, all in one directory under os.tmpdir(), removed at the end. */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class TempFiles {
  readonly dir = mkdtempSync(join(tmpdir(), 'hologram-bench-'));
  private counter = 0;

  /** A fresh, not yet existing file path. */
  file(label: string): string {
    this.counter += 1;
    return join(this.dir, `${label}-${this.counter}.db`);
  }

  /** A fresh, empty directory (a daemon's data dir). */
  directory(label: string): string {
    this.counter += 1;
    const path = join(this.dir, `${label}-${this.counter}`);
    mkdirSync(path);
    return path;
  }

  /** Removes a database file with its WAL and shared-memory files. */
  remove(path: string): void {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
