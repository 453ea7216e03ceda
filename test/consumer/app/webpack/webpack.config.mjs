// The consumer app's src/main.ts built by webpack 5 the way a webpack app is set up: TypeScript through
// ts-loader (TypeScript 5.9: ts-loader needs TypeScript's JavaScript API, which TypeScript 7 has not), an HTML
// page by html-webpack-plugin. Nothing here is for Tessera: its encoder worker, onnxruntime-web's WebAssembly
// and XGrammar are emitted from the package's own `new Worker(new URL(...))` and `new URL(...)`.
// `performance.hints` off: webpack's size advice for any app above 244 KiB, which a model runtime is.
import { resolve } from 'node:path';
import HtmlWebpackPlugin from 'html-webpack-plugin';

const app = resolve(import.meta.dirname, '..');

export default {
  mode: 'production',
  context: app,
  entry: './src/main.ts',
  output: { path: resolve(app, 'dist-webpack'), clean: true },
  resolve: { extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } },
  module: {
    rules: [{ test: /\.ts$/, loader: 'ts-loader', options: { transpileOnly: true, compiler: 'typescript5', configFile: resolve(app, 'tsconfig.json') } }],
  },
  plugins: [new HtmlWebpackPlugin({ template: resolve(import.meta.dirname, 'index.html') })],
  performance: { hints: false },
};
