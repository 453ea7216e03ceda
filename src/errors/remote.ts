// Errors of the remote engine (createRemoteEngine): the server it talks to refused a request, could not be
// reached, or serves another model than the checkpoint encoding here.

import { TesseraError } from './base';

/** The server answered with an error status (OpenAI's error shape when it sent one). */
export class RemoteServerError extends TesseraError {
  override readonly name = 'RemoteServerError';
  readonly code = 'REMOTE_SERVER';
  constructor(
    readonly status: number,
    /** The server's own error code (`error.code`), when it gave one. */
    readonly serverCode: string | null,
    readonly serverMessage: string,
    readonly url: string,
  ) {
    super(`the server at ${url} answered ${status}${serverCode ? ` (${serverCode})` : ''}: ${serverMessage}`);
  }
}

/** The server could not be reached (connection refused, DNS, CORS in a browser, a dropped stream). */
export class RemoteUnreachableError extends TesseraError {
  override readonly name = 'RemoteUnreachableError';
  readonly code = 'REMOTE_UNREACHABLE';
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(
      `could not reach ${url}${cause instanceof Error ? ` (${cause.message})` : ''}; check the baseURL, that the server runs, and in a browser ` +
        "that it allows this page's origin (tessera serve --allowed-origins).",
      { cause },
    );
  }
}

/** The server serves another model than the checkpoint this side encodes with, so embeddings would not fit. */
export class RemoteModelMismatchError extends TesseraError {
  override readonly name = 'RemoteModelMismatchError';
  readonly code = 'REMOTE_MODEL_MISMATCH';
  constructor(
    readonly what: string,
    readonly local: string | number,
    readonly remote: string | number,
  ) {
    super(
      `the server's ${what} is ${JSON.stringify(remote)} but the local checkpoint's is ${JSON.stringify(local)}; ` +
        "point the remote engine at the same checkpoint the server runs (its model and encoder must match), or use media: 'raw'.",
    );
  }
}
