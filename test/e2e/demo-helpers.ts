// Helpers for the demo page specs: console-error watching (page and workers), screenshots attached to the
// report and kept under test-results/screenshots/<name>.png, and the Load / Ask steps.

import { mkdirSync, writeFileSync } from 'node:fs';
import { expect, type Page, type TestInfo } from '@playwright/test';
import type { RunRecord } from '../../demo/chat';

export const SCREENSHOT_DIR = 'test-results/screenshots';

/** Console errors and uncaught exceptions of the page and its workers, collected as they come. */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${m.text()} ${m.location().url ?? ''}`.trim());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('worker', (w) =>
    w.on('console', (m) => {
      if (m.type() === 'error') errors.push(`worker: ${m.text()}`);
    }),
  );
  return errors;
}

/** Full-page PNG, attached to the test report and written to test-results/screenshots/<name>.png. */
export async function shot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const body = await page.screenshot({ fullPage: true });
  await testInfo.attach(name, { body, contentType: 'image/png' });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  writeFileSync(`${SCREENSHOT_DIR}/${name}.png`, body);
}

export async function waitForWebGpuCheck(page: Page): Promise<void> {
  await expect(page.locator('body')).not.toHaveAttribute('data-webgpu', 'checking');
}

/**
 * Click Load and wait until the model is ready (or failed). A load still going after `timeoutMs` fails
 * with the progress list and status line; the page's own stall watchdog (`?stall=`) should fail it first,
 * with the engine's state in #load-error.
 */
export async function load(page: Page, timeoutMs = 240_000): Promise<void> {
  await expect(page.locator('#load')).toBeEnabled();
  await page.locator('#load').click();
  try {
    await expect(page.locator('body')).toHaveAttribute('data-model', /ready|error/, { timeout: timeoutMs });
  } catch (e) {
    throw new Error(`the load did not end in ${timeoutMs} ms: ${await loadState(page)}`, { cause: e });
  }
}

/** The Load step's status line, progress rows and error, for a failure message. */
export async function loadState(page: Page): Promise<string> {
  return page.evaluate(() => {
    const text = (sel: string) => document.querySelector(sel)?.textContent?.trim() ?? '';
    const rows = [...document.querySelectorAll('#load-progress li')].map(
      (li) => `[${(li as HTMLElement).dataset.state}] ${li.textContent?.replace(/\s+/g, ' ').trim()}`,
    );
    return `status "${text('#load-status')}"; progress ${JSON.stringify(rows)}; error "${text('#load-error')}"`;
  });
}

/** Type a message (optional), press Ask, wait for the turn to end; returns window.tesseraRun. */
export async function ask(page: Page, text?: string): Promise<RunRecord> {
  if (text !== undefined) await page.locator('#prompt').fill(text);
  const before = await page.locator('#messages > li.assistant').count();
  await page.locator('#run').click();
  await expect(page.locator('#messages > li.assistant')).toHaveCount(before + 1);
  await expect(page.locator('#messages > li.assistant').last()).not.toHaveAttribute('data-state', 'streaming');
  return (await page.evaluate(() => window.tesseraRun))!;
}

export function answered(r: RunRecord | undefined): Extract<RunRecord, { info: unknown }> {
  if (!r || !('info' in r)) throw new Error(`the request did not answer: ${JSON.stringify(r)}`);
  return r;
}
