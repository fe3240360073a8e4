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
pub const DEFAULT_SEED: [u8; 32] = {
    let mut seed = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        seed[i] = i as u8;
        i += 1;
    }
    seed
};

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

/// The command that regenerates a corpus from `seed` into `vectors/own`.
#[must_use]
pub fn command_for(seed: &[u8; 32]) -> String {
    format!(
        "cargo run --release --bin kemsphinx -- generate --seed {} vectors/own",
        hex::encode(seed)
    )
}

/// The provenance object of one file.
fn provenance(seed: &[u8; 32], kind: &str, stream: u64) -> Value {
    let reference = if kind == "negative" {
        "not produced by the Go reference; each case's reference_class and reference_result \
         are what the Go reference (the build that made vectors/reference/) did with that \
         case, observed on 2026-11-30 (vectors/observed/own-negative-reference-outcomes.json)"
    } else {
        "not produced by the Go reference; see vectors/README.md for what each \
         reference_result is based on"
    };
    json!({
        "generator": format!(
            "kemsphinx generate (kemsphinx-cli {}, with the kemsphinx crate of the same workspace)",
            env!("CARGO_PKG_VERSION")
        ),
        "seed": hex(seed),
        "drbg": format!(
            "ChaCha20Rng (crate chacha20 0.10, feature rng) keyed with `seed`, stream {}; \
             values are drawn in the order the cases list them",
            stream
        ),
        "regenerate": command_for(seed),
        "encoding": "all byte strings lowercase hex",
        "geometry": "MLKEM768-X25519, 4 hops: packet 16150, header 5962, per-hop routing 1202 \
                     (commands area 82 + next KEM ciphertext 1120), SURB 6058, payload 10156, \
                     surb_keys 320",
        "kem": "MLKEM768-X25519: X25519 through HPQC's BLAKE2Xb adapter, then ML-KEM-768, \
                split-PRF combiner splitprf-v1",
        "reference": reference,
    })
}

/// Build every file of the corpus for `seed`: `(file name, JSON text)`.
///
/// # Errors
/// A description of the first case that could not be generated.
pub fn corpus(seed: &[u8; 32]) -> Gen<Vec<(String, String)>> {
    FILES
        .iter()
        .map(|&(kind, stream, build)| {
            let name = format!("{kind}.json");
            let cases = build(&mut Drbg::new(seed, stream)).map_err(|e| format!("{name}: {e}"))?;
            let doc = json!({
                "schema": SCHEMA,
                "kind": kind,
                "provenance": provenance(seed, kind, stream),
                "cases": cases,
            });
            let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
            text.push('\n');
            Ok((name, text))
        })
        .collect()
}

/// Write the corpus for `seed` into `dir` (created if missing); returns
/// the files written.
///
/// # Errors
/// A generation or I/O failure.
pub fn write(seed: &[u8; 32], dir: &Path) -> Gen<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    corpus(seed)?
        .into_iter()
        .map(|(name, text)| {
            let path = dir.join(name);
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
