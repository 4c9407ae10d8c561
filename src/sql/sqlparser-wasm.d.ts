/** The parser's WebAssembly module, compiled by the runtime's module loader (CompiledWasm). */
declare const module: WebAssembly.Module;
export default module;
