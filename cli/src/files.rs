//! Reading a named file within a bound, whatever the name points at.
//!
//! A path is opened without blocking (`O_NONBLOCK` on Unix, so a FIFO with
//! no writer cannot hold the command), and what was opened is then judged
//! by the opened descriptor's own metadata, never by a second look at the
//! path (which could have changed in between): only a regular file is read,
//! and only if its size is within the bound. Reading stops one byte past
//! the bound all the same, so a file that grows meanwhile is refused
//! rather than read without end.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// Open `path` for reading without blocking on a FIFO or device, and the
/// metadata of what was opened.
///
/// # Errors
/// The I/O error.
pub fn open(path: &Path) -> io::Result<(File, Metadata)> {
    #[cfg(unix)]
    let file = {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        File::from(rustix::fs::open(path, flags, Mode::empty())?)
    };
    #[cfg(not(unix))]
    let file = File::open(path)?;
    with_metadata(file)
}

/// An opened file and its own metadata.
///
/// # Errors
/// The I/O error.
pub fn with_metadata(file: File) -> io::Result<(File, Metadata)> {
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// Read all of `source` into `buf` (cleared first), refusing more than
/// `max` bytes; `buf`'s capacity is the caller's choice.
///
/// # Errors
/// The I/O error, or the input is longer than `max` bytes.
pub fn read_at_most(source: impl Read, max: u64, buf: &mut Vec<u8>) -> Result<(), String> {
    buf.clear();
    source
        .take(max.saturating_add(1))
        .read_to_end(buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > max {
        return Err(format!("longer than {max} bytes"));
    }
    Ok(())
}

/// Whether `meta` (of an opened file) is a regular file of at most `max`
/// bytes.
///
/// # Errors
/// Why not: not a regular file (a folder, FIFO, socket or device, said
/// which), or larger than `max` bytes.
pub fn regular_within(meta: &Metadata, max: u64) -> Result<(), String> {
    if !meta.is_file() {
        return Err(format!("not a regular file ({})", kind(meta)));
    }
    if meta.len() > max {
        return Err(format!("{} bytes, over the bound of {max}", meta.len()));
    }
    Ok(())
}

/// What a file that is not a regular file is.
fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let device = t.is_char_device() || t.is_block_device();
        let kinds = [
            (t.is_fifo(), "a FIFO"),
            (t.is_socket(), "a socket"),
            (device, "a device"),
        ];
        if let Some((_, kind)) = kinds.into_iter().find(|k| k.0) {
            return kind;
        }
    }
    "not a file"
}
