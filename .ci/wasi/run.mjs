// Cargo's runner for wasm32-wasip1 (CARGO_TARGET_WASM32_WASIP1_RUNNER):
// runs a WASI program, such as a test binary, under Node's built-in
// `node:wasi` (preview1), with its arguments and environment, and exits
// with its status. The host's file system is visible at its own paths
// (preopened as `/`), so that tests find their vector files through the
// absolute CARGO_MANIFEST_DIR. (Preopening only the repository, at its own
// absolute path, left every file in it "not found" under Node 20.)
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import process from 'node:process';

const [program, ...args] = process.argv.slice(2);
if (!program) {
    console.error('usage: node run.mjs PROGRAM.wasm [ARGS...]');
    process.exit(2);
}
const wasi = new WASI({
    version: 'preview1',
    args: [program, ...args],
    env: process.env,
    preopens: { '/': '/' },
    returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exit(wasi.start(instance));
