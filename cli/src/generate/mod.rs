//! `kemsphinx generate`: the own conformance corpus, deterministically from
//! a seed.
//!
//! Every random value (key seeds, node ids, encapsulation randomness,
//! payloads, AEZ keys…) is drawn from a ChaCha20 DRBG seeded with the
//! 32-byte corpus seed, one independent stream per file, in file order. The
//! same seed therefore gives byte-identical files, and changing one file's
//! cases never changes another file. Packets and SURBs are built from the
//! drawn randomness through the crate's hazmat entry points, and checked
//! against the normal creation API fed with the same DRBG, so the corpus
//! is exactly what `create_packet` / `create_surb` produce.

pub(crate) mod drbg;
mod negative;
mod packets;
mod primitives;
mod scenario;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};

use self::drbg::{Drbg, Gen};
use crate::case::hex;
use crate::conformance::SCHEMA;

/// The seed of the committed corpus (`vectors/own/`): the bytes 0x00..0x1f.
pub const DEFAULT_SEED: [u8; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
    26, 27, 28, 29, 30, 31,
];

/// A file's case builder.
type Build = fn(&mut Drbg) -> Gen<Vec<Value>>;

/// Every file of the corpus, `<kind>.json`: its kind, the DRBG stream its
/// values are drawn from, and its case builder. The stream numbers are part
/// of the format of the corpus: never renumber them.
const FILES: [(&str, u64, Build); 9] = [
    ("kem", 1, primitives::kem),
    ("aez", 2, primitives::aez),
    ("kdf", 3, primitives::kdf),
    ("stream", 4, primitives::stream),
    ("mac", 5, primitives::mac),
    ("replay_tag", 6, primitives::replay_tag),
    ("forward", 7, packets::forward),
    ("surb", 8, packets::surb),
    ("negative", 9, negative::negative),
];

/// The fixed text of the provenance objects: the fields of every file's,
/// and the `reference` of the `negative` file and of the others.
const PROVENANCE: &str = include_str!("provenance.json");

/// The provenance object of one file.
fn provenance(seed: &[u8; 32], kind: &str, stream: u64) -> Gen<Value> {
    let template: Value = serde_json::from_str(PROVENANCE).map_err(|e| e.to_string())?;
    let mut doc = template["every file"].clone();
    doc["reference"] =
        template["reference"][if kind == "negative" { kind } else { "other" }].clone();
    let version = env!("CARGO_PKG_VERSION");
    doc["generator"] = json!(format!(
        "kemsphinx generate (kemsphinx-cli {version}, with the kemsphinx crate of the same workspace)"
    ));
    doc["seed"] = hex(seed);
    doc["drbg"] = json!(format!(
        "ChaCha20Rng (crate chacha20 0.10, feature rng) keyed with `seed`, stream {stream}; \
         values are drawn in the order the cases list them"
    ));
    doc["regenerate"] = json!(format!(
        "cargo run --release --bin kemsphinx -- generate --seed {} vectors/own",
        hex::encode(seed)
    ));
    Ok(doc)
}

/// Write the corpus for `seed` into `dir` (created if missing), every
/// file `<kind>.json`; returns the files written.
///
/// # Errors
/// A generation or I/O failure (a description of the first case that
/// could not be generated).
pub fn write(seed: &[u8; 32], dir: &Path) -> Gen<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    FILES
        .iter()
        .map(|&(kind, stream, build)| {
            let path = dir.join(format!("{kind}.json"));
            let cases =
                build(&mut Drbg::new(seed, stream)).map_err(|e| format!("{kind}.json: {e}"))?;
            let doc = json!({
                "schema": SCHEMA,
                "kind": kind,
                "provenance": provenance(seed, kind, stream)?,
                "cases": cases,
            });
            let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
            text.push('\n');
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// Usage of `kemsphinx generate`.
pub const USAGE: &str = "kemsphinx generate [--seed HEX32] DIR\n\
  write the own conformance corpus (kemsphinx-vectors/1) into DIR;\n\
  the same seed always gives byte-identical files (default seed 000102…1f)";

/// `kemsphinx generate [--seed HEX] DIR`.
#[must_use]
pub fn main(args: &[OsString]) -> ExitCode {
    match parse_args(args).and_then(|(seed, dir)| Ok((seed, write(&seed, dir)?))) {
        Ok((seed, files)) => {
            for f in &files {
                println!("wrote {}", f.display());
            }
            println!("seed {}", hex::encode(seed));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kemsphinx generate: {e}\nusage: {USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The seed and output folder from the arguments.
fn parse_args(args: &[OsString]) -> Gen<([u8; 32], &Path)> {
    let mut seed = DEFAULT_SEED;
    let mut dir = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--seed") => {
                let text = it.next().ok_or("--seed needs a value")?;
                seed = hex::decode(text.as_encoded_bytes())
                    .ok()
                    .and_then(|s| s.try_into().ok())
                    .ok_or("--seed must be 64 hex digits (32 bytes)")?;
            }
            Some(other) if other.starts_with("--") => {
                return Err(format!("unknown option {other}"));
            }
            _ if dir.is_none() => dir = Some(Path::new(arg)),
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    Ok((seed, dir.ok_or("missing output folder")?))
}
