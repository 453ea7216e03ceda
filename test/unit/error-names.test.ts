// Every exported error class says its own name: `name` equals the export name, so it survives a
// minifier (test/consumer checks the same in the packed package and in an app's minified bundle).

import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors';
import { errorClassNames } from '../helpers/error-classes';

describe('error class names', () => {
  it('equal the export names, with a distinct stable code each', () => {
    const found = errorClassNames(errors as unknown as Record<string, unknown>);
    expect(found.length).toBeGreaterThan(30);
    expect(found.filter((c) => c.name !== c.exportName)).toEqual([]);
    const codes = found.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
