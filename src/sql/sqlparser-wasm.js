// Re-exports the parser's compiled WebAssembly module. wrangler and the vitest workers pool bundle a .wasm import
// as CompiledWasm (a WebAssembly.Module). This indirection exists for TypeScript only: the package ships a
// .wasm.d.ts describing the instance's exports, which would shadow the module type; sqlparser-wasm.d.ts states
// what the import really is.
export { default } from '../../node_modules/@guanmingchiu/sqlparser-ts/wasm/sqlparser_rs_wasm_bg.wasm';
