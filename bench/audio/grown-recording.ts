// `npx tsx bench/audio/grown-recording.ts [--wav=FILE] [--step=5]`: how often a recording that grows keeps its
// earlier audio chunks in the encoder cache, with whole-clip features (src/encoder/audio/prepare-audio.ts: a
// chunk's key names its window of samples and the clip's floor). The recording is asked about again every
// `step` seconds as it grows (as a dictation app would); for each version, each chunk that the previous
// version had complete (its window, its samples and the 40 after them, all recorded) is counted as kept (its
// key, and so its embeddings, were already cached) or encoded again.
// Per-chunk features (the 'per-chunk' option) are counted beside it: they keep every full chunk by design.
//
// The recording: FILE (WAV, any rate; decoded and resampled as the engine does), or by default speech
// synthesized with espeak-ng (Debian: apt-get install espeak-ng) from the text below, read at 16 kHz. Prints a
// table, then ONE JSON line.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeWav } from '../../src/encoder/audio/decode-wav';
import { extractorOf, intakeChunks } from '../../test/helpers/audio-intake';
import { table } from '../harness/table';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const step = Number(arg('step') ?? 5);
const RATE = 16000;

const TEXT = [
  'The harbour was quiet in the early morning, and the fishing boats rocked gently against the pier.',
  'An old man walked along the water, counting the gulls that waited on the posts for the first catch.',
  'He stopped at the end of the pier, looked out over the grey sea, and tried to remember the weather of his youth.',
  'Back then, he said to nobody in particular, the winters were colder and the summers were long and bright.',
  'A child ran past with a kite, laughing, and the wind lifted it high over the roofs of the little town.',
  'Somewhere a radio played an old song about trains and rivers, and a baker opened his shutters with a bang.',
  'The market filled slowly: apples, cheese, warm bread, flowers in buckets, and crates of silver fish on ice.',
  'People greeted each other by name, argued about prices, and asked after each other’s families and friends.',
  'By noon the sun had broken through, and the whole harbour shone as if someone had polished it overnight.',
  'The old man sat on a bench, closed his eyes, and listened to the town talking, as he had for eighty years.',
  'In the afternoon the tide turned, and the boats came back one by one, low in the water and followed by birds.',
  'The fishermen shouted to each other across the decks, tied their ropes, and carried the boxes up the steps.',
  'A young woman with a notebook asked them questions about the season, the prices, and the state of the nets.',
  'Most of them laughed and said the sea was the same as ever, generous one week and stubborn the next.',
  'One of them, a tall man with a red cap, told her about a storm that had kept them in port for nine days.',
  'They had played cards, mended everything that could be mended, and watched the waves break over the wall.',
  'When the weather cleared, the whole town came down to see them off, as if they were going to the other side of the world.',
  'She wrote it all down, thanked them, and walked back towards the station as the lamps came on along the quay.',
  'On the train she read her notes again and decided that the story was not about fish at all, but about waiting.',
  'Waiting for the weather, for the tide, for the catch, for the people who go out and for the people who come back.',
  'She fell asleep before the second stop and dreamt of gulls, kites, and the sound of ropes against the masts.',
  'The next morning she began to write, and by the evening she had the first page, the hardest one, behind her.',
].join(' ');

/** 16 kHz mono PCM of a WAV file (averaged to mono and resampled as the engine does). */
async function readWav(file: string): Promise<Float32Array> {
  const blocks = [...decodeWav(new Uint8Array(readFileSync(file)), RATE, file, undefined)];
  const out = new Float32Array(blocks.reduce((a, b) => a + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

function synthesize(): { pcm: Promise<Float32Array>; source: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-grown-'));
  const wav = join(dir, 'speech.wav');
  try {
    execFileSync('espeak-ng', ['-v', 'en', '-s', '150', '-w', wav, TEXT]);
  } catch (e) {
    throw new Error(
      `espeak-ng could not make the speech recording (${(e as Error).message}); install it (Debian: apt-get install espeak-ng) or pass --wav=FILE`,
    );
  }
  const pcm = readWav(wav).finally(() => rmSync(dir, { recursive: true, force: true }));
  return { pcm, source: 'espeak-ng, voice en, 150 words/min' };
}

const file = arg('wav');
const { pcm: pcmPromise, source } = file ? { pcm: readWav(file), source: file } : synthesize();
const pcm = await pcmPromise;
const extractor = extractorOf(join(import.meta.dirname, '../../test/fixtures/models/Voxtral-Mini-3B-2507'));
const seconds = pcm.length / RATE;
console.log(`[bench] recording: ${source}, ${seconds.toFixed(1)} s; asked again every ${step} s as it grows`);

const rows: string[][] = [];
const totals = { wholeClip: { earlier: 0, kept: 0 }, perChunk: { earlier: 0, kept: 0 } };
let previous: { wholeClip: string[]; perChunk: string[] } | undefined;
let previousSamples = 0;
for (let s = step; s < seconds + step; s += step) {
  const prefix = pcm.subarray(0, Math.min(pcm.length, Math.round(s * RATE)));
  const wholeClip = (await intakeChunks(extractor, prefix)).map((c) => c.key);
  const perChunk = (await intakeChunks(extractor, prefix, 'per-chunk')).map((c) => c.key);
  if (previous) {
    // The earlier chunks that could be kept: those whose whole window (their samples and the 40 after them)
    // was in the previous version. The chunk it ended in changes by construction.
    const complete = Math.floor((previousSamples - extractor.after) / extractor.config.nSamples);
    const counts = (now: string[], before: string[]) => {
      const earlier = Math.min(now.length, before.length, complete);
      const kept = now.slice(0, earlier).filter((k, i) => k === before[i]).length;
      return { earlier, kept };
    };
    const w = counts(wholeClip, previous.wholeClip);
    const p = counts(perChunk, previous.perChunk);
    totals.wholeClip.earlier += w.earlier;
    totals.wholeClip.kept += w.kept;
    totals.perChunk.earlier += p.earlier;
    totals.perChunk.kept += p.kept;
    rows.push([
      `${(prefix.length / RATE).toFixed(0)} s`,
      String(wholeClip.length),
      `${w.kept} of ${w.earlier}`,
      `${p.kept} of ${p.earlier}`,
    ]);
  }
  previous = { wholeClip, perChunk };
  previousSamples = prefix.length;
}
console.log(table(['asked at', 'chunks', 'complete earlier chunks kept (whole-clip)', 'the same (per-chunk)'], rows));
const rate = (t: { earlier: number; kept: number }) => (t.earlier === 0 ? 0 : t.kept / t.earlier);
console.log(
  `[bench] whole-clip features kept ${totals.wholeClip.kept} of ${totals.wholeClip.earlier} complete earlier chunks (${(100 * rate(totals.wholeClip)).toFixed(1)}%); ` +
    `per-chunk ${totals.perChunk.kept} of ${totals.perChunk.earlier} (${(100 * rate(totals.perChunk)).toFixed(1)}%)`,
);
console.log(
  JSON.stringify({
    bench: 'audio-grown-recording',
    source,
    seconds,
    step,
    wholeClip: { ...totals.wholeClip, rate: rate(totals.wholeClip) },
    perChunk: { ...totals.perChunk, rate: rate(totals.perChunk) },
  }),
);
