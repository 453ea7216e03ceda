import { readFileSync } from 'node:fs';
import { createEngine } from './dist/node.js';
const engine = await createEngine({ model: 'public/models/smolvlm2-video-tiny', encoder: { mode: 'in-process' }, kvCacheTokens: 2048 });
for (const f of ['count-4s.mp4', 'count-4s.mp4', 'count-4s-vp9.webm', 'count.gif', 'count-12s.mp4']) {
  const t0 = performance.now();
  try {
    const r = await engine.chat.completions.create({ messages: [{ role: 'user', content: [{ type: 'video', video: readFileSync('test/fixtures/video/' + f) }, { type: 'text', text: 'What happens?' }] }], max_tokens: 4, tessera: { videoThumbnails: 16 } });
    const v = r.tessera.videos[0];
    console.log(f, (performance.now() - t0).toFixed(0), 'ms', r.tessera.tokenIds, r.usage.prompt_tokens, v.source, v.numFrames, v.fps, v.duration, v.frames.map((x) => `${x.index}@${x.label}`).join(' '), v.frames[0].thumbnail?.width, r.tessera.media.map((m) => m.source).join(','));
  } catch (e) { console.log(f, 'ERR', (e as Error).name, (e as Error).message); }
  console.log(JSON.stringify(engine.stats().encoder.video), engine.stats().encoder.encodes);
}
engine.destroy();
