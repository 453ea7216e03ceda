// Errors crossing a worker: rebuilt from their stable code (names may be minified by the bundler).

import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors';
import { errorClassForCode, fromWireError, toWireError } from '../../src/protocol/errors';

describe('error transfer', () => {
  it("rebuilds the class from the code even when the sender's class name was minified", () => {
    const sent = new errors.EncoderOutOfMemoryError(13, 'out of memory');
    const wire = toWireError(sent);
    // What the built worker sends: its classes are bound to one-letter names.
    const minified = { ...wire, name: 'T', fields: { ...wire.fields, name: 'T' } };
    const got = fromWireError(minified);
    expect(got).toBeInstanceOf(errors.EncoderOutOfMemoryError);
    expect(got).toBeInstanceOf(errors.TesseraError);
    expect(got.name).toBe('EncoderOutOfMemoryError');
    expect((got as errors.EncoderOutOfMemoryError).numTiles).toBe(13);
    expect((got as errors.EncoderOutOfMemoryError).code).toBe('ENCODER_OUT_OF_MEMORY');
    expect(got.message).toBe(sent.message);
  });

  it('looks classes up by code only (the table is checked for completeness by the type checker)', () => {
    expect(errorClassForCode('IMAGE_DECODE')).toBe(errors.ImageDecodeError);
    expect(errorClassForCode('ENCODER_WORKER_CRASHED')).toBe(errors.EncoderWorkerCrashedError);
    expect(errorClassForCode('NO_SUCH_CODE')).toBeUndefined();
    expect(errorClassForCode('toString')).toBeUndefined();
    expect(errorClassForCode(undefined)).toBeUndefined();
  });

  it('an unknown code or a foreign error arrives as a plain Error with its name and fields', () => {
    const got = fromWireError({ code: 'FROM_A_NEWER_WORKER', name: 'FancyError', message: 'm', fields: { n: 1 } });
    expect(got).not.toBeInstanceOf(errors.TesseraError);
    expect(got.name).toBe('FancyError');
    expect((got as unknown as { n: number }).n).toBe(1);
    const plain = fromWireError(toWireError(new TypeError('boom')));
    expect(plain.name).toBe('TypeError');
    expect(plain.message).toBe('boom');
  });
});
