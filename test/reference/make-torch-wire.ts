// Writes Tessera's torch.save bytes for each case of torch-wire-cases.ts into .cache/torch-wire/ (ts-<name>.pt),
// for test/reference/torch_wire.py to load with PyTorch itself. Part of `npm run goldens`.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeTorchTensor } from '../../src/protocol/torch-tensor';
import { caseValues, TORCH_WIRE_CASES } from './torch-wire-cases';

const dir = join(import.meta.dirname, '../../.cache/torch-wire');
mkdirSync(dir, { recursive: true });
for (const c of TORCH_WIRE_CASES) writeFileSync(join(dir, `ts-${c.name}.pt`), encodeTorchTensor(caseValues(c), c.shape, c.dtype));
console.log(`wrote ${TORCH_WIRE_CASES.length} tensors to ${dir}`);
