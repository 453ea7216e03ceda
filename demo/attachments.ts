// Attachments of the next message: picked files shown as removable thumbnails, sent as content parts.
// Each attachment has a `kind`: an image (its bytes, shown as itself), a video (the File, read lazily by
// the engine: only the sampled frames are decoded; shown as a named tile, its frames come with the answer)
// or audio (a file or a microphone recording, decoded in the encoder worker; shown with its duration and
// waveform).

import type { ChatContentPart } from '../src/engine/types';
import { audioPreview, formatDuration } from './audio-capture';

interface ImageAttachment {
  kind: 'image';
  name: string;
  mime: string;
  bytes: Uint8Array;
  /** Object URL for thumbnails (kept while a message shows it). */
  url: string;
}

export interface VideoAttachment {
  kind: 'video';
  name: string;
  /** Sent as is: a Blob part is read lazily, so a long clip is never copied whole. */
  file: Blob;
}

export interface AudioAttachment {
  kind: 'audio';
  name: string;
  file: Blob;
  /** From the page's own decode, for the tile (undefined when the page could not decode it). */
  duration?: number;
  peaks?: number[];
}

export type Attachment = ImageAttachment | VideoAttachment | AudioAttachment;

/** What the audio picker accepts: the formats the encoder decodes (and videos, for their sound). */
export const AUDIO_ACCEPT = 'audio/*,.wav,.mp3,.ogg,.opus,.flac,.m4a,.aac,.webm,.mp4';

/** What the video picker accepts: the containers the engine demuxes (MP4/MOV, WebM/MKV). */
export const VIDEO_ACCEPT = 'video/mp4,video/webm,video/quicktime,video/x-matroska,.mp4,.m4v,.webm,.mkv,.mov';

export function kindOfFile(file: File): Attachment['kind'] | undefined {
  if (file.type.startsWith('image/') || /\.(png|jpe?g|webp|gif|bmp|avif)$/i.test(file.name)) return 'image';
  if (file.type.startsWith('video/') || /\.(mp4|m4v|webm|mkv|mov)$/i.test(file.name)) return 'video';
  if (file.type.startsWith('audio/') || /\.(wav|mp3|ogg|opus|flac|m4a|aac)$/i.test(file.name)) return 'audio';
  return undefined;
}

export async function audioAttachment(file: Blob, name: string): Promise<AudioAttachment> {
  const preview = await audioPreview(file);
  return { kind: 'audio', name, file, ...(preview ? { duration: preview.duration, peaks: preview.peaks } : {}) };
}

export function videoAttachment(file: File): VideoAttachment {
  return { kind: 'video', name: file.name, file };
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
    case 'video':
      return { type: 'video', video: a.file };
    case 'audio':
      return { type: 'audio', audio: a.file };
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
    case 'video': {
      // A tile, not a <video>: the page need not be able to play the codec (the encoder worker decodes it).
      const tile = document.createElement('span');
      tile.className = 'video-tile';
      tile.setAttribute('role', 'img');
      tile.setAttribute('aria-label', `attached video ${a.name}`);
      tile.title = a.name;
      tile.textContent = '▶ video';
      return tile;
    }
    case 'audio': {
      const tile = document.createElement('span');
      tile.className = 'audio-tile';
      tile.setAttribute('role', 'img');
      const duration = a.duration !== undefined ? formatDuration(a.duration) : undefined;
      tile.setAttribute('aria-label', `attached audio ${a.name}${duration ? `, ${duration}` : ''}`);
      tile.title = a.name;
      if (a.peaks) tile.append(waveform(a.peaks));
      const label = document.createElement('span');
      label.className = 'duration';
      label.textContent = duration ? `♪ ${duration}` : '♪ audio';
      tile.append(label);
      return tile;
    }
  }
}

/** Peaks as an SVG of bars (a picture of the recording, not the model's input). */
function waveform(peaks: number[]): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${peaks.length * 2} 20`);
  svg.setAttribute('class', 'waveform');
  svg.setAttribute('aria-hidden', 'true');
  peaks.forEach((p, i) => {
    const h = Math.max(1, p * 20);
    const bar = document.createElementNS(ns, 'rect');
    bar.setAttribute('x', String(i * 2));
    bar.setAttribute('y', String((20 - h) / 2));
    bar.setAttribute('width', '1.4');
    bar.setAttribute('height', String(h));
    svg.append(bar);
  });
  return svg;
}

/** Object URLs an attachment holds (revoke them when no message shows it any more). */
export function release(a: Attachment): void {
  if (a.kind === 'image') URL.revokeObjectURL(a.url);
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
