//! Puts `memory.x` where cortex-m-rt's `link.x` finds it, and links with
//! `link.x` (a build script's link argument works whatever directory cargo
//! is run from, unlike a `.cargo/config.toml` here).
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    std::fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
