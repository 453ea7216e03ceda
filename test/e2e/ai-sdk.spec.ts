// tessera/ai-sdk in Chromium: the real `ai` package bundled into a page by Vite, on qwen3_vl-tiny on WebGPU.
// generateText and streamText give the engine's own greedy answer, generateObject an object that validates,
// and a required tool call an input that validates (test/gpu/ai-sdk.test.ts runs the same in Node).

import { expect, test } from '@playwright/test';
import { validate } from '../helpers/json-schema-subset';
import { WEATHER_SCHEMA } from '../helpers/weather-tool';

const WEATHER = WEATHER_SCHEMA;

test('the AI SDK in a page: generateText, streamText, generateObject and a tool call on qwen3_vl-tiny', async ({ page }) => {
  await page.goto('/ai-sdk.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const r = await page.evaluate(([schema]) => window.tesseraAiSdk!('/models/qwen3_vl-tiny/', schema), [WEATHER] as const);
  expect(r.backend).toBe('webgpu');
  expect(r.generated.text).toBe(r.direct.text);
  expect(r.generated.inputTokens).toBe(r.direct.promptTokens);
  expect(r.streamed.text).toBe(r.direct.text);
  expect(r.streamed.finishReason).toBe(r.generated.finishReason);
  expect(validate(r.object, WEATHER)).toEqual([]);
  expect(r.toolCall.finishReason).toBe('tool-calls');
  expect(r.toolCall.toolName).toBe('get_weather');
  expect(validate(r.toolCall.input, WEATHER)).toEqual([]);
});
