// The storage panel: what Tessera keeps in this browser (inspectStorage(): each model's downloaded files and
// quantized copies, the encoder cache, the origin's quota and whether it is persisted), what the last load's
// storage check found (engine.stats().storage), and buttons that delete one model or everything. It works
// without a loaded model, so a StorageQuotaError can be answered by deleting something here.

import type { StorageCheck } from '../src/storage/check-storage';
import { clearStorage, deleteStoredModel, inspectStorage, type StorageReport } from '../src/storage/stored-data';
import { formatBytes } from './format';

/** What the last load's storage check says, in a few words. */
function describeCheck(check: StorageCheck | undefined): string {
  if (!check) return '–';
  if (!check.storing) return `not stored: ${check.reason ?? 'storing is off'}`;
  const unknown = check.unknownSizeFiles.length > 0 ? ` (+ ${check.unknownSizeFiles.length} of unknown size)` : '';
  return check.neededBytes === 0 && unknown === ''
    ? 'stored (read from this browser)'
    : `stored (${formatBytes(check.neededBytes)} downloaded${unknown})`;
}

function describeQuota(r: StorageReport): string {
  return r.quotaBytes === undefined || r.usageBytes === undefined
    ? 'unknown'
    : `${formatBytes(r.usageBytes)} of ${formatBytes(r.quotaBytes)} (${formatBytes(r.totalBytes)} by Tessera)`;
}

export class StoragePanel {
  private readonly figures = new Map<string, HTMLElement>();
  private readonly list = document.createElement('ul');
  private readonly status = document.createElement('p');
  private refreshing: Promise<void> | undefined;
  private again = false;

  constructor(
    el: HTMLElement,
    /** The last load's storage check (undefined before a load). */
    private readonly check: () => StorageCheck | undefined,
  ) {
    const h = document.createElement('h3');
    h.id = 'storage-heading';
    h.textContent = 'Stored in this browser';
    const dl = document.createElement('dl');
    for (const [id, label, title] of [
      ['load', 'This load', 'engine.stats().storage: the storage check before the download'],
      ['quota', 'Storage used', 'navigator.storage.estimate() for this site, and what Tessera holds of it'],
      [
        'persisted',
        'Kept under pressure',
        'navigator.storage.persisted(): whether the browser keeps this site’s storage when the disk fills up',
      ],
      ['encoder', 'Encoder cache', 'image and audio embeddings in IndexedDB'],
    ]) {
      const dt = document.createElement('dt');
      dt.textContent = label;
      dt.title = title;
      const dd = document.createElement('dd');
      dd.dataset.storage = id;
      dd.textContent = '–';
      this.figures.set(id, dd);
      dl.append(dt, dd);
    }
    this.list.id = 'stored-models';
    this.list.setAttribute('aria-label', 'Stored models');
    const clear = document.createElement('button');
    clear.type = 'button';
    clear.id = 'clear-storage';
    clear.textContent = 'Delete everything stored';
    clear.addEventListener('click', () => void this.run(() => clearStorage(), 'everything Tessera stored'));
    this.status.className = 'hint';
    this.status.setAttribute('role', 'status');
    el.setAttribute('aria-labelledby', h.id);
    el.replaceChildren(h, dl, this.list, clear, this.status);
  }

  /** Reads what is stored and renders it (one read at a time; a call during one reads again after it). */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          this.render(await inspectStorage());
        } while (this.again);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private render(r: StorageReport): void {
    this.figures.get('load')!.textContent = describeCheck(this.check());
    this.figures.get('quota')!.textContent = describeQuota(r);
    this.figures.get('persisted')!.textContent = r.persisted === undefined ? 'unknown' : r.persisted ? 'yes' : 'no';
    this.figures.get('encoder')!.textContent = `${r.encoderCache.numEntries} entries, ${formatBytes(r.encoderCache.sizeBytes)}`;
    this.list.replaceChildren(
      ...r.models.map((m) => {
        const li = document.createElement('li');
        li.dataset.model = m.model;
        const name = document.createElement('span');
        name.className = 'stored-name';
        name.textContent = m.model === '' ? 'quantized copies of unnamed models' : m.model.replace(location.origin, '');
        name.title = m.model;
        const size = document.createElement('span');
        size.className = 'stored-size';
        const copies = m.numQuantizedCopies > 0 ? ` + ${m.numQuantizedCopies} quantized, ${formatBytes(m.quantizedBytes)}` : '';
        size.textContent = `${m.files.length} file${m.files.length === 1 ? '' : 's'}, ${formatBytes(m.downloadedBytes)}${copies}`;
        const del = document.createElement('button');
        del.type = 'button';
        del.textContent = 'Delete';
        del.setAttribute('aria-label', `Delete ${m.model || 'unnamed quantized copies'}`);
        del.addEventListener('click', () => void this.run(() => deleteStoredModel(m.model), m.model || 'the unnamed copies'));
        li.append(name, size, del);
        return li;
      }),
    );
    if (r.models.length === 0) {
      const li = document.createElement('li');
      li.className = 'hint';
      li.textContent = 'No models stored.';
      this.list.append(li);
    }
  }

  private async run(action: () => Promise<{ numEntries: number; freedBytes: number }>, what: string): Promise<void> {
    try {
      const done = await action();
      this.status.textContent = `Deleted ${what}: ${done.numEntries} entries, ${formatBytes(done.freedBytes)}.`;
    } catch (e) {
      this.status.textContent = `Could not delete ${what}: ${(e as Error).message}`;
    }
    await this.refresh();
  }
}
