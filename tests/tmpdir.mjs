// tmpdir.mjs — temporary directories for the node tests. node --test runs
// each test file in a process of its own: when that process exits with 0
// the directories it made go away; when a test failed (exit code non-zero)
// they stay, named on stderr, so the developer can look.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs = [];

process.on('exit', (code) => {
  if (!dirs.length) return;
  if (code !== 0) {
    process.stderr.write(`temporary directories kept:\n${dirs.map((d) => `  ${d}\n`).join('')}`);
    return;
  }
  // the suites stop their `zcor serve` children before the end; the
  // retries cover one that still writes (only sync calls work here)
  for (const d of dirs) {
    try {
      rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch (e) {
      process.stderr.write(`cannot remove ${d}: ${e.message}\n`);
    }
  }
});

// A new empty directory $TMPDIR/<prefix>XXXXXX, removed at a clean exit.
export function mkTmp(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
