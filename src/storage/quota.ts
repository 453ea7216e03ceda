// The origin's storage quota as the browser reports it (navigator.storage: StorageManager), behind a small
// interface so tests and callers can pass their own. Everything here tolerates a browser without it (an
// insecure context, an old engine): the answers are then undefined, never an exception.
//
// estimate() is approximate by design (browsers round and pad it against fingerprinting), so a download
// is said to fit only when it leaves QUOTA_HEADROOM of its own size spare.

/**
 * The part of StorageManager Tessera uses (its estimate's two numbers written out: StorageEstimate is a DOM
 * type, and this is in the public declarations a Node project without lib.dom type-checks).
 */
export interface StorageManagerLike {
  estimate(): Promise<{ quota?: number; usage?: number }>;
  persist?(): Promise<boolean>;
  persisted?(): Promise<boolean>;
}

/** What estimate() said, when it said both numbers. */
export interface QuotaEstimate {
  quotaBytes: number;
  usageBytes: number;
}

/** The margin kept above a download's size: 0.1 is 10%. */
export const QUOTA_HEADROOM = 0.1;

/** navigator.storage, where this browser (and context) has it. */
export function browserStorageManager(): StorageManagerLike | undefined {
  return (globalThis.navigator as Navigator | undefined)?.storage;
}

/** The quota and usage, or undefined when the browser does not say both. */
export async function estimateQuota(storage: StorageManagerLike | undefined): Promise<QuotaEstimate | undefined> {
  try {
    const e = await storage?.estimate();
    return e?.quota === undefined || e.usage === undefined ? undefined : { quotaBytes: e.quota, usageBytes: e.usage };
  } catch {
    return undefined;
  }
}

/** Whether `neededBytes` more fit under the quota with the headroom to spare. */
export function hasRoom(neededBytes: number, q: QuotaEstimate): boolean {
  return neededBytes * (1 + QUOTA_HEADROOM) <= q.quotaBytes - q.usageBytes;
}

/**
 * Asks the browser to keep this origin's storage under storage pressure (persist()), unless it already does
 * (persisted()): Chrome decides by itself (site engagement, an installed app), Firefox asks the user. The
 * answer; false where the browser cannot persist.
 */
export async function askToPersist(storage: StorageManagerLike | undefined): Promise<boolean> {
  try {
    if (await storage?.persisted?.()) return true;
    return (await storage?.persist?.()) ?? false;
  } catch {
    return false;
  }
}

/** Whether the browser keeps this origin's storage under pressure (persisted()); undefined where it cannot say. */
export async function isPersisted(storage: StorageManagerLike | undefined): Promise<boolean | undefined> {
  try {
    return await storage?.persisted?.();
  } catch {
    return undefined;
  }
}
