// What a safetensors file's header says, once parsed and validated (safetensors.ts, safetensors-validate.ts).

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'U8' | 'I8' | 'F64' | 'BOOL' | 'I16' | 'U16' | 'U32' | 'U64';

export interface TensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Byte range inside the data section. */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  /** Bytes before the data section (8 + header size). */
  dataOffset: number;
  tensors: Map<string, TensorInfo>;
  metadata: Record<string, string>;
  /** Total file size the header implies. */
  fileBytes: number;
}
