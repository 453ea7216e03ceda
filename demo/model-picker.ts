// The model picker: a bundled checkpoint (public/models/index.json, written by make:tiny), a Hugging Face
// repo or URL, or files on this computer (picked files, or a folder: showDirectoryPicker where the
// browser has it, a webkitdirectory input elsewhere). It only says what to load; main.ts loads it.

import type { BrowserModelInput } from '../src/engine/create-browser';
import { formatBytes } from './format';
import { modelUrlFromInput } from './model-url';

export interface ModelChoice {
  /** Shown in status lines. */
  label: string;
  model: BrowserModelInput;
  /** For URL models: the folder's files when known (the bundled index), so absent files are not requested. */
  modelFiles?: string[];
}

interface BundledModel {
  id: string;
  description: string;
  files: string[];
}

type Kind = 'bundled' | 'hub' | 'local';

const $ = <T extends HTMLElement>(sel: string) => document.querySelector<T>(sel)!;

export class ModelPicker {
  private bundled: BundledModel[] = [];
  private local: { files: File[] } | { dir: FileSystemDirectoryHandle } | undefined;
  private readonly select = $<HTMLSelectElement>('#bundled-model');
  private readonly hubInput = $<HTMLInputElement>('#hub-model');
  private readonly filesInput = $<HTMLInputElement>('#model-files');
  private readonly folderInput = $<HTMLInputElement>('#model-folder-input');
  private readonly folderButton = $<HTMLButtonElement>('#model-folder');
  private readonly summary = $<HTMLParagraphElement>('#local-summary');

  constructor(private readonly onChange: () => void) {
    for (const r of document.querySelectorAll<HTMLInputElement>('input[name="model-kind"]')) r.addEventListener('change', onChange);
    this.select.addEventListener('change', () => this.choose('bundled'));
    this.hubInput.addEventListener('input', () => this.choose('hub'));
    const onFiles = (input: HTMLInputElement) => {
      const files = Array.from(input.files ?? []);
      if (files.length === 0) return;
      this.local = { files };
      const bytes = files.reduce((a, f) => a + f.size, 0);
      const names = files.map((f) => f.name.split('/').pop()).sort();
      this.summary.textContent = `${files.length} files, ${formatBytes(bytes)}: ${names.slice(0, 6).join(', ')}${names.length > 6 ? ', …' : ''}`;
      this.choose('local');
    };
    this.filesInput.addEventListener('change', () => onFiles(this.filesInput));
    this.folderInput.addEventListener('change', () => onFiles(this.folderInput));
    // A granted directory handle reads files lazily and reaches the encoder worker as a handle.
    const picker = (window as Window & { showDirectoryPicker?: () => Promise<FileSystemDirectoryHandle> }).showDirectoryPicker;
    if (picker) {
      this.folderButton.hidden = false;
      $<HTMLElement>('#model-folder-fallback').hidden = true;
      this.folderButton.addEventListener('click', async () => {
        let dir: FileSystemDirectoryHandle;
        try {
          dir = await picker.call(window);
        } catch {
          return; // the user closed the dialog
        }
        this.local = { dir };
        this.summary.textContent = `folder ${dir.name}`;
        this.choose('local');
      });
    }
  }

  /** Fill the bundled list from public/models/index.json; false when there is none. */
  async loadBundled(): Promise<boolean> {
    try {
      const res = await fetch('/models/index.json');
      if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json')) throw new Error(`HTTP ${res.status}`);
      this.bundled = ((await res.json()) as { models: BundledModel[] }).models;
    } catch {
      this.bundled = [];
    }
    this.select.replaceChildren(
      ...this.bundled.map((m) => {
        const o = document.createElement('option');
        o.value = m.id;
        o.textContent = `${m.id}: ${m.description}`;
        return o;
      }),
    );
    if (this.bundled.length === 0) {
      this.select.disabled = true;
      $<HTMLElement>('#bundled-hint').textContent = 'No bundled models here: run `npm run make:tiny` to make them.';
      this.choose('hub');
    }
    return this.bundled.length > 0;
  }

  /** Choose the bundled model `id` (for `?run&model=<id>`); false when there is none by that id. */
  selectBundled(id: string): boolean {
    if (!this.bundled.some((m) => m.id === id)) return false;
    this.select.value = id;
    this.choose('bundled');
    return true;
  }

  get kind(): Kind {
    return (document.querySelector<HTMLInputElement>('input[name="model-kind"]:checked')?.value ?? 'bundled') as Kind;
  }

  private choose(kind: Kind): void {
    $<HTMLInputElement>(`#kind-${kind}`).checked = true;
    this.onChange();
  }

  /** The current choice, or a sentence saying what is missing. */
  choice(): ModelChoice | string {
    switch (this.kind) {
      case 'bundled': {
        const m = this.bundled.find((b) => b.id === this.select.value);
        if (!m) return 'There is no bundled model to load.';
        return { label: m.id, model: new URL(`/models/${m.id}/`, location.href).href, modelFiles: m.files };
      }
      case 'hub': {
        const url = modelUrlFromInput(this.hubInput.value, location.href);
        if (!url) return 'Enter a Hugging Face repo id (owner/name) or a URL.';
        return { label: url, model: url };
      }
      case 'local':
        if (!this.local) return 'Pick the checkpoint’s files or its folder first.';
        if ('dir' in this.local) return { label: `folder ${this.local.dir.name}`, model: this.local.dir };
        return { label: `${this.local.files.length} picked files`, model: this.local.files };
    }
  }
}
