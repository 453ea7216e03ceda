import { describe, expect, it } from 'vitest';
import { StopStrings } from '../../src/engine/stop-strings';

/** Feed deltas; return what was emitted in all and whether it stopped. */
function run(stops: string[], deltas: string[]): { text: string; stopped: boolean } {
  const s = new StopStrings(stops);
  let text = '';
  for (const d of deltas) text += s.push(d);
  text += s.flush();
  return { text, stopped: s.stopped };
}

describe('StopStrings', () => {
  it('cuts before a stop string split over several deltas, and holds back only what could start one', () => {
    const s = new StopStrings(['</answer>']);
    expect(s.push('42 </')).toBe('42 ');
    expect(s.push('ans')).toBe('');
    expect(s.push('wer> more')).toBe('');
    expect(s.stopped).toBe(true);
    expect(s.flush()).toBe('');
    expect(s.push('after')).toBe('');
  });

  it('releases held-back text when it turns out not to be a stop string, and at the end', () => {
    expect(run(['STOP'], ['a S', 'T', 'x'])).toEqual({ text: 'a STx', stopped: false });
    expect(run(['STOP'], ['a S', 'TO'])).toEqual({ text: 'a STO', stopped: false });
  });

  it('the earliest of several stop strings wins; a stop string at the very start leaves no text', () => {
    expect(run(['b', 'cd'], ['acd', 'b'])).toEqual({ text: 'a', stopped: true });
    expect(run(['\n\n', 'END'], ['x\n', '\nEND'])).toEqual({ text: 'x', stopped: true });
    expect(run(['Hi'], ['Hi there'])).toEqual({ text: '', stopped: true });
  });

  it('every split of a text gives the same answer (a brute force over the delta boundaries)', () => {
    const text = 'The total is 12.50 EUR.\n\nThanks';
    const stops = ['EUR.\n\n', '99'];
    const want = 'The total is 12.50 ';
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        expect(run(stops, [text.slice(0, i), text.slice(i, j), text.slice(j)])).toEqual({ text: want, stopped: true });
      }
    }
  });

  it('without stop strings every delta passes through', () => {
    expect(run([], ['a', 'b'])).toEqual({ text: 'ab', stopped: false });
  });
});
