// tessera/ai-sdk: a Tessera engine as a language model of the Vercel AI SDK (`ai` 7, `@ai-sdk/provider` 4).
// It has no runtime dependency: `@ai-sdk/provider` supplies its types only.

export { type ChatEngine, TesseraLanguageModel, type TesseraModelOptions, tesseraModel } from './language-model';
