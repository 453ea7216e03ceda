// Attachments of the next message: picked files shown as removable thumbnails, sent as content parts.
// Each attachment has a `kind`; images are the only kind today. Video lands later as one more member of
// the union, one more case in kindOfFile / contentPart / thumbnail, and `video/*` in the picker's accept.

import type { ChatContentPart } from '../src/engine/types';

export interface ImageAttachment {
  kind: 'image';
  name: string;
  mime: string;
  bytes: Uint8Array;
  /** Object URL for thumbnails (kept while a message shows it). */
  url: string;
}

export type Attachment = ImageAttachment;

export function kindOfFile(file: File): Attachment['kind'] | undefined {
  if (file.type.startsWith('image/') || /\.(png|jpe?g|webp|gif|bmp|avif)$/i.test(file.name)) return 'image';
  return undefined;
}

export async function attachmentFromBlob(blob: Blob, name: string): Promise<Attachment> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  return { kind: 'image', name, mime: blob.type, bytes, url: URL.createObjectURL(blob) };
}

/** The content part a message carries for this attachment. */
export function contentPart(a: Attachment): ChatContentPart {
  switch (a.kind) {
    case 'image':
      return { type: 'image', image: a.bytes };
  }
}

/** A small preview element for the attachment (composer tray and sent messages). */
export function thumbnail(a: Attachment): HTMLElement {
  switch (a.kind) {
    case 'image': {
      const img = document.createElement('img');
      img.src = a.url;
      img.alt = `attached image ${a.name}`;
      // A file the browser cannot show (it will not decode for the model either): say so in its place.
      img.addEventListener('error', () => {
        const note = document.createElement('span');
        note.className = 'no-preview';
        note.textContent = `${a.name}: no preview`;
        img.replaceWith(note);
      });
      return img;
    }
  }
}

/** The composer's attachment tray. */
export class AttachmentTray {
  private list: Attachment[] = [];

  constructor(
    private readonly el: HTMLElement,
    private readonly onChange: () => void = () => {},
  ) {}

  get items(): readonly Attachment[] {
    return this.list;
  }

  add(a: Attachment): void {
    this.list.push(a);
    this.render();
  }

  /** Empty the tray (after sending: the message keeps the attachments it took). */
  take(): Attachment[] {
    const taken = this.list;
    this.list = [];
    this.render();
    return taken;
  }

  private remove(a: Attachment): void {
    this.list = this.list.filter((x) => x !== a);
    this.render();
  }

  private render(): void {
    this.el.replaceChildren(
      ...this.list.map((a) => {
        const fig = document.createElement('figure');
        fig.className = 'attachment';
        fig.dataset.kind = a.kind;
        fig.style.margin = '0';
        const name = document.createElement('figcaption');
        name.className = 'name';
        name.textContent = a.name;
        const remove = document.createElement('button');
        remove.type = 'button';
        remove.textContent = '×';
        remove.setAttribute('aria-label', `Remove ${a.name}`);
        remove.addEventListener('click', () => this.remove(a));
        fig.append(thumbnail(a), name, remove);
        return fig;
      }),
    );
    this.onChange();
  }
}
