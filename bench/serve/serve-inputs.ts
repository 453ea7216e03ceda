// Inputs bench:serve uses in the page, for ours and the peer alike: distinct drawn images (one 512 tile
// each on the bench model) and distinct prompts.

export const CAPTION_PROMPT = 'Can you describe this image?';

/** A distinct, deterministic 480x360 PNG per index (shapes and colours change with it). */
export async function captionImage(index: number): Promise<Uint8Array> {
  const c = new OffscreenCanvas(480, 360);
  const g = c.getContext('2d')!;
  g.fillStyle = `hsl(${(index * 47) % 360}, 55%, 45%)`;
  g.fillRect(0, 0, c.width, c.height);
  for (let k = 0; k < 4; k++) {
    g.fillStyle = `hsl(${(index * 47 + k * 90) % 360}, 70%, ${30 + k * 12}%)`;
    g.fillRect((index * 37 + k * 101) % 400, (index * 53 + k * 67) % 280, 40 + k * 20, 30 + k * 15);
  }
  return new Uint8Array(await (await c.convertToBlob({ type: 'image/png' })).arrayBuffer());
}

export function storyPrompt(i: number): string {
  return `Tell me story number ${i} about a lighthouse keeper and a storm.`;
}
