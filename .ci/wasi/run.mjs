// Cargo's runner for wasm32-wasip1 (CARGO_TARGET_WASM32_WASIP1_RUNNER):
// runs a WASI program, such as a test binary, under Node's built-in
// `node:wasi` (preview1), with its arguments and environment, and exits
// with its status. The directory given by WASI_ROOT (the repository) is
// visible at its own absolute path, so that tests find their vector files
// through CARGO_MANIFEST_DIR; nothing else of the file system is.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import process from 'node:process';

const [program, ...args] = process.argv.slice(2);
const root = process.env.WASI_ROOT;
if (!program || !root) {
    console.error('usage: WASI_ROOT=DIR node run.mjs PROGRAM.wasm [ARGS...]');
    process.exit(2);
}
const wasi = new WASI({
    version: 'preview1',
    args: [program, ...args],
    env: process.env,
    preopens: { [root]: root },
    returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exit(wasi.start(instance));
