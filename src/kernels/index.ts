// Every kernel: shape types, CPU references and prepare functions.

export * from './activations';
export * from './argmax';
export * from './copy';
export * from './embedding-gather';
export * from './gelu-tanh';
export * from './layer-norm';
export * from './matmul';
export * from './patch-embed';
export * from './pixel-shuffle';
export * from './residual-add';
export * from './rms-norm';
export * from './rope';
export * from './softmax';
export * from './swiglu';
export * from './vit-attention';
