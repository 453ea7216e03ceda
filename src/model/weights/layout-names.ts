// Matching a weight layout's checkpoint names to the names a checkpoint has: tensors under an alternative
// spelling, and tensors a checkpoint may leave out (an LM head tied to the embeddings).

import type { WeightLayout } from '../weight-layout';

/**
 * The layout's aliasIfMissing keys whose checkpoint tensors are all absent (`present` says which names the
 * checkpoint has) become aliases: their GPU tensor and specs leave the layout. Returns the names dropped.
 */
export function aliasAbsent(layout: WeightLayout, present: (name: string) => boolean): Set<string> {
  const dropped = new Set<string>();
  for (const [key, target] of Object.entries(layout.aliasIfMissing ?? {})) {
    const parts = layout.checkpoint.filter((t) => t.target === key);
    if (parts.length === 0 || parts.some((t) => present(t.name))) continue;
    for (const t of parts) dropped.add(t.name);
    layout.aliases[key] = target;
    layout.gpu = layout.gpu.filter((w) => w.key !== key);
    layout.checkpoint = layout.checkpoint.filter((t) => t.target !== key);
  }
  return dropped;
}

/**
 * Tensors the checkpoint lacks under their canonical name but has under an alternative spelling
 * (WeightLayout.spellings) take that name. Only whole-prefix spellings are tried, canonical first.
 */
export function respell(layout: WeightLayout, present: (name: string) => boolean): void {
  for (const spec of layout.checkpoint) {
    if (present(spec.name)) continue;
    for (const [canonical, alternative] of layout.spellings ?? []) {
      if (!spec.name.startsWith(canonical)) continue;
      const name = alternative + spec.name.slice(canonical.length);
      if (present(name)) {
        spec.name = name;
        break;
      }
    }
  }
}
