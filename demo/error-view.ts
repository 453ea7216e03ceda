// Errors on the demo page look like errors: the class name and the stable code apart, then the message
// (Tessera messages say what happened, give the numbers, and say what to do). A stop is not an error:
// isStop() tells the two apart.

export interface ErrorParts {
  name: string;
  /** Tessera errors carry a stable code; other errors have none. */
  code?: string;
  message: string;
}

export function errorParts(e: unknown): ErrorParts {
  if (e instanceof Error || (e && typeof e === 'object' && 'message' in e)) {
    const err = e as Error & { code?: unknown };
    return { name: err.name || 'Error', code: typeof err.code === 'string' ? err.code : undefined, message: String(err.message) };
  }
  return { name: 'Error', message: String(e) };
}

/** The request ended because the user pressed Stop (RequestAbortedError, or a DOM AbortError). */
export function isStop(e: unknown): boolean {
  const p = errorParts(e);
  return p.code === 'ABORTED' || p.name === 'AbortError';
}

/** An error card; `note` adds what the demo did about it (e.g. "this turn is left out of the history"). */
export function renderError(e: unknown, note?: string): HTMLElement {
  const p = errorParts(e);
  const box = document.createElement('div');
  box.className = 'error';
  box.setAttribute('role', 'alert');
  const head = document.createElement('div');
  head.className = 'error-head';
  const name = document.createElement('span');
  name.className = 'error-name';
  name.textContent = p.name;
  head.append(name);
  if (p.code) {
    const code = document.createElement('code');
    code.className = 'error-code';
    code.title = 'error code';
    code.textContent = p.code;
    head.append(code);
  }
  const message = document.createElement('p');
  message.className = 'error-message';
  message.textContent = p.message;
  box.append(head, message);
  if (note) {
    const n = document.createElement('p');
    n.className = 'error-note';
    n.textContent = note;
    box.append(n);
  }
  return box;
}
