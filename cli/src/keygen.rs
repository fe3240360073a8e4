//! `kemsphinx keygen --out DIR [--name NAME]`: a mix key pair as PEM files
//! in the reference's format, `DIR/NAME.kem_public.pem` and
//! `DIR/NAME.kem_private.pem` (the suffixes of the reference's `genkeypair`).
//!
//! The private file has mode 0600 from the call that creates it. Nothing is
//! overwritten (an existing file or link, even a dangling one, stops the
//! call), and the two files are written whole or not at all: each is written
//! to a temporary file beside it (`temp`), then named without replacing
//! (`persist`: `renameat2` with `RENAME_NOREPLACE`, or a hard link), and on
//! any failure every file this call made is removed. (If the process is
//! killed while writing, a temporary file may remain; a key name never holds
//! a partial key.) The modes printed are read back from the files: what the
//! umask left, not what was asked for.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kemsphinx::PrivateKey;
use kemsphinx::geometry::KEY_SEED_LEN;
use tempfile::NamedTempFile;
use zeroize::Zeroizing;

/// Usage of the subcommand.
pub const USAGE: &str = "usage: kemsphinx keygen --out DIR [--name NAME]\n\n\
  Writes DIR/NAME.kem_public.pem (mode 0644 less the umask) and\n\
  DIR/NAME.kem_private.pem (mode 0600) for MLKEM768-X25519, in the Katzenpost\n\
  reference's PEM format, each whole or not at all.\n\
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
pub fn main(args: &[OsString]) -> ExitCode {
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
        Ok(modes) => {
            let (public, private) = (files.public.display(), files.private.display());
            println!("wrote {public} (public, mode {:04o})", modes.public);
            println!("wrote {private} (private, mode {:04o})", modes.private);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("keygen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--out DIR [--name NAME]`, or `None` for `--help`.
fn parse(args: &[OsString]) -> Result<Option<(PathBuf, String)>, String> {
    let (mut dir, mut name) = (None, "mix".to_owned());
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("-h" | "--help") => return Ok(None),
            Some("--out") => dir = Some(PathBuf::from(it.next().ok_or("--out needs a folder")?)),
            Some("--name") => {
                let value = it.next().ok_or("--name needs a value")?;
                name = value.to_string_lossy().into_owned();
            }
            _ => return Err(format!("unknown argument {}", arg.to_string_lossy())),
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

/// The permission bits the two files have (read back from them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modes {
    /// The public key file's.
    pub public: u32,
    /// The private key file's.
    pub private: u32,
}

/// Write `key` to `files`, creating `dir` if needed: both files whole, or
/// neither (see the module docs).
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] if either file exists; any I/O error.
pub fn write_key_pair(dir: &Path, files: &KeyFiles, key: &PrivateKey) -> io::Result<Modes> {
    create_dir(dir)?;
    for path in [&files.public, &files.private] {
        if fs::symlink_metadata(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists; not overwriting a key", path.display()),
            ));
        }
    }
    let private = temp(&files.private, &key.to_pem()[..], 0o600)?;
    let public = temp(&files.public, &key.public_key().to_pem(), 0o644)?;
    let modes = Modes {
        public: permissions(public.as_file())?,
        private: permissions(private.as_file())?,
    };
    persist(private, &files.private)?;
    if let Err(e) = persist(public, &files.public) {
        // Both or neither: the private file named a moment ago goes.
        let _ = fs::remove_file(&files.private);
        return Err(e);
    }
    sync_dir(dir);
    Ok(modes)
}

/// A complete temporary copy of a key file beside `target`
/// (`.NAME.RANDOM.tmp`), created with `mode` (`O_EXCL`: never an existing
/// file or link), written in one write and flushed to disk; removed when
/// dropped.
fn temp(target: &Path, bytes: &[u8], mode: u32) -> io::Result<NamedTempFile> {
    let mut prefix = OsString::from(".");
    prefix.push(target.file_name().unwrap_or_default());
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(mode));
    #[cfg(not(unix))]
    let _ = mode;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
    builder
        .tempfile_in(dir.unwrap_or(Path::new(".")))
        .and_then(|mut file| {
            write_once(file.as_file_mut(), bytes)?;
            file.as_file().sync_all()?;
            Ok(file)
        })
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", target.display())))
}

/// Give a temporary file its final name, failing rather than replacing if
/// the name exists (the temporary file is then removed).
fn persist(file: NamedTempFile, target: &Path) -> io::Result<()> {
    file.persist_noclobber(target)
        .map(drop)
        .map_err(|e| io::Error::new(e.error.kind(), format!("{}: {}", target.display(), e.error)))
}

/// Write all of `bytes` with one `write` call (retried only if
/// interrupted before writing anything). A short write is an error: it
/// means a full disk or a file size limit, and a second write past such a
/// limit would bring `SIGXFSZ`, which ends the process before it can clean
/// up.
fn write_once(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    let written = loop {
        match file.write(bytes) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => break other?,
        }
    };
    let len = bytes.len();
    if written != len {
        let why = format!("short write ({written} of {len} bytes): disk full or file size limit?");
        return Err(io::Error::new(io::ErrorKind::WriteZero, why));
    }
    Ok(())
}

/// The permission bits of an open file.
fn permissions(file: &File) -> io::Result<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(file.metadata()?.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        Ok(if file.metadata()?.permissions().readonly() {
            0o444
        } else {
            0o644
        })
    }
}

/// Flush the folder's entries (the new names) to disk, where that can be
/// done. Best effort: the files are complete and named already, and a
/// failure here (or a system that cannot open a folder as a file) must
/// not make the caller remove them.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Create `dir` (and parents) with mode 0700 if it does not exist.
fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}
