//! `kemsphinx keygen`: a mix key pair as PEM files in the reference's format.
//!
//! ```text
//! kemsphinx keygen --out DIR [--name NAME]
//! ```
//!
//! Writes `DIR/NAME.kem_public.pem` and `DIR/NAME.kem_private.pem` (NAME
//! defaults to `mix`; the suffixes are those of the reference's
//! `genkeypair`). The private file is created with mode 0600 in the same
//! call that creates it, so it is never readable by others, not even for an
//! instant. Nothing is overwritten: if either file exists (or is a symlink,
//! even a dangling one) nothing is written.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kemsphinx::PrivateKey;
use kemsphinx::geometry::KEY_SEED_LEN;
use zeroize::Zeroizing;

/// Usage of the subcommand.
pub const USAGE: &str = "usage: kemsphinx keygen --out DIR [--name NAME]\n\n\
  Writes DIR/NAME.kem_public.pem (mode 0644) and DIR/NAME.kem_private.pem\n\
  (mode 0600) for MLKEM768-X25519, in the Katzenpost reference's PEM format.\n\
  NAME defaults to `mix`. Refuses to overwrite either file; creates DIR\n\
  (mode 0700) if it does not exist.";

/// The two files of a key pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFiles {
    /// `NAME.kem_public.pem`.
    pub public: PathBuf,
    /// `NAME.kem_private.pem`.
    pub private: PathBuf,
}

impl KeyFiles {
    /// The files for `name` in `dir`.
    #[must_use]
    pub fn new(dir: &Path, name: &str) -> Self {
        Self {
            public: dir.join(format!("{name}.kem_public.pem")),
            private: dir.join(format!("{name}.kem_private.pem")),
        }
    }
}

/// `kemsphinx keygen ARGS`.
#[must_use]
pub fn main(args: &[String]) -> ExitCode {
    let (dir, name) = match parse(args) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("{why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let files = KeyFiles::new(&dir, &name);
    match generate().and_then(|key| write_key_pair(&dir, &files, &key)) {
        Ok(()) => {
            println!("wrote {} (public, mode 0644)", files.public.display());
            println!("wrote {} (private, mode 0600)", files.private.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("keygen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--out DIR [--name NAME]`, or `None` for `--help`.
fn parse(args: &[String]) -> Result<Option<(PathBuf, String)>, String> {
    let (mut dir, mut name) = (None, "mix".to_owned());
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--out" => dir = Some(PathBuf::from(it.next().ok_or("--out needs a folder")?)),
            "--name" => name.clone_from(it.next().ok_or("--name needs a value")?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let valid = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    if name.is_empty() || name.starts_with('.') || !name.chars().all(valid) {
        return Err(format!(
            "--name {name:?}: use letters, digits, '-', '_', '.'"
        ));
    }
    Ok(Some((dir.ok_or("--out DIR is required")?, name)))
}

/// A fresh key pair from the operating system's RNG, derived from a 96-byte
/// seed exactly as [`PrivateKey::generate`] does, but with RNG failure as an
/// error rather than a panic.
///
/// # Errors
/// When the operating system refuses randomness.
pub fn generate() -> io::Result<PrivateKey> {
    let mut seed = Zeroizing::new([0u8; KEY_SEED_LEN]);
    getrandom::fill(&mut seed[..]).map_err(|e| io::Error::other(format!("OS RNG: {e}")))?;
    Ok(PrivateKey::from_seed(&seed))
}

/// Write `key` to `files`, creating `dir` if needed. Refuses if either file
/// exists; if the second cannot be written, the first is removed again.
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] if either file exists; any I/O error.
pub fn write_key_pair(dir: &Path, files: &KeyFiles, key: &PrivateKey) -> io::Result<()> {
    create_dir(dir)?;
    for path in [&files.public, &files.private] {
        if fs::symlink_metadata(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists; not overwriting a key", path.display()),
            ));
        }
    }
    let private = key.to_pem().map_err(io::Error::other)?;
    write_new(&files.private, &private[..], 0o600)?;
    let public = key.public_key().to_pem().map_err(io::Error::other)?;
    write_new(&files.public, &public, 0o644).inspect_err(|_| {
        let _ = fs::remove_file(&files.private);
    })
}

/// Create `dir` (and parents) with mode 0700 if it does not exist.
fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Create a new file with `mode` (never an existing file or a symlink:
/// `O_CREAT | O_EXCL`), write `bytes`, and flush them to disk.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file: File = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
