// The tool the tool-calling tests offer: a bounded schema (two enums, both required, nothing else), so a
// call written by a random-weight model ends within a few dozen tokens and can be validated.

import type { ChatCompletionTool } from '../../src/engine/types';

/** get_weather's parameters (JSON Schema). */
export const WEATHER_SCHEMA = {
  type: 'object' as const,
  properties: { city: { type: 'string' as const, enum: ['Oslo', 'Lima'] }, unit: { type: 'string' as const, enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};

/** get_weather as an OpenAI function tool. */
export const WEATHER_TOOL: ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_SCHEMA },
};
