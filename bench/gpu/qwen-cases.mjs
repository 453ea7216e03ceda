// bench/gpu/qwen-cases.mjs <checkpoint>: the golden requests of one tiny Qwen-VL checkpoint that the CLI
// can send (one image, then its text), one per line: id, image path, prompt, the golden answer's length
// (tab-separated), for bench/gpu/on-device.sh. Plain JavaScript: the device machine runs it with bare Node.
import { readFileSync } from 'node:fs';

const checkpoint = process.argv[2];
const input = JSON.parse(readFileSync('test/fixtures/goldens/qwen-pipeline-input.json', 'utf8'));
const golden = JSON.parse(readFileSync('test/fixtures/goldens/qwen-pipeline.json', 'utf8'));
const answers = golden.models.find((m) => m.checkpoint === checkpoint);
if (!answers) throw new Error(`${checkpoint}: not in qwen-pipeline.json`);
for (const c of input.cases) {
  const images = c.content.filter((p) => p.image);
  const texts = c.content.filter((p) => p.text);
  if (images.length !== 1 || texts.length !== 1 || c.content.some((p) => p.video) || c.content[0] !== images[0]) continue;
  const tokens = answers.cases.find((a) => a.id === c.id)?.tokens;
  if (tokens) console.log([c.id, images[0].image, texts[0].text, tokens.length].join('\t'));
}
