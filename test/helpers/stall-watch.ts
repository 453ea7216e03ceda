// What the tests are waiting on, for the stall watchdog (test/helpers/stall-watchdog.ts): engines (and
// engines being created) and GPU devices register here with a progress counter and a report of their
// state. The watchdog fails a test whose registered parts made no progress for its limit, printing the
// reports, so a hang ends in minutes with what was pending instead of sitting until the test timeout.

export interface Watched {
  /** Names the part in the report, e.g. "engine smolvlm-tiny (being created)". */
  label: string;
  /** A value that changes whenever the part gets anywhere (a step ran, a GPU operation finished). */
  progress(): number | string;
  /** The part's state now: what it waits on. */
  report(): unknown;
}

const watched = new Set<Watched>();

/** Registers `w` until the returned function is called. */
export function watch(w: Watched): () => void {
  watched.add(w);
  return () => watched.delete(w);
}

/** A fingerprint of every registered part's progress (changes when any of them progresses). */
export function progressFingerprint(): string {
  return [...watched].map((w) => `${w.label}:${safe(() => w.progress())}`).join('|');
}

/** Every registered part's state, as text. */
export function stallReport(): string {
  if (watched.size === 0) return '(nothing registered: no engine or GPU device was live)';
  return [...watched]
    .map(
      (w) =>
        `- ${w.label}:\n${indent(
          JSON.stringify(
            safe(() => w.report()),
            null,
            2,
          ),
        )}`,
    )
    .join('\n');
}

function safe<T>(f: () => T): T | string {
  try {
    return f();
  } catch (e) {
    return `(failed: ${(e as Error).message})`;
  }
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
