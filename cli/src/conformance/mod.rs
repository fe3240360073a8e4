//! Run conformance vector files and folders and report per case.
//!
//! One format is understood, and nothing else: `kemsphinx-vectors/1`, a
//! JSON object with `schema`, `kind` and `cases` (kinds `kem`, `aez`, `kdf`,
//! `stream`, `mac`, `replay_tag`, `forward`, `surb`, `negative`), as
//! documented in `vectors/README.md`. (The Go AEZ's own vector lists are
//! run by the `aez5` crate's tests, which keep them.)
//!
//! A file of any other shape, or of an unknown schema or kind, is reported
//! as a failure rather than skipped, so a run can never pass by reading
//! nothing.
//!
//! A path named on the command line is followed if it is a link; inside a
//! folder no link is followed (a `*.json` link there is a failure), so a
//! walk never leaves the folder it was given: every entry is opened
//! relative to its folder with `O_NOFOLLOW`, so an entry swapped for a
//! link after the folder was listed is refused, not followed. Without
//! `openat` (off Unix) a folder is a failure, not walked. Every file and
//! folder is visited at most once per run, told apart by device and inode
//! (by canonical path off Unix): a file named twice counts once. Only
//! regular files of at most [`MAX_FILE_LEN`] bytes are read; anything else
//! named (a folder's `*.json` FIFO, a device, `/dev/zero`, a 3 GB file) is
//! a failure found from the opened file's metadata, without blocking and
//! without reading it. Paths are kept as the operating system gives them
//! (not necessarily UTF-8) and printed lossily. Text from the files (case
//! ids, kinds, schemas) and file names are printed with control
//! characters escaped ([`printable`]).
//!
//! A run's memory is bounded, whatever the number of files or cases: one
//! file's text (at most [`MAX_FILE_LEN`]), one case parsed from it at a
//! time (at most [`MAX_CASE_LEN`] of text, which serde_json holds in at
//! most about 100 times as many bytes: 100 MiB), and the first
//! [`MAX_KEPT_FAILURES`] failures (ids and reasons cut to
//! [`MAX_FAILURE_TEXT`] characters; the rest are counted). Beyond that a
//! walk holds the names of the folder it is listing and about 20 bytes per
//! file and folder visited.

mod negative;
mod packets;
mod primitives;
mod stream;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::{self, Metadata};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files;

pub(crate) use negative::negative as check_negative;
pub use negative::{action_class, error_class};

/// The largest vector file read: 8 MiB, 3.6 times the largest real one
/// (`vectors/own/negative.json`, 2.3 MB).
pub const MAX_FILE_LEN: u64 = 8 << 20;

/// The largest case read: 1 MiB, 4.6 times the largest real one (a `surb`
/// case, 228 KB). serde_json holds a case in up to about 100 times its
/// text (1.6 GB for a 16 MiB list of `{"":0}`), so this bounds a run's
/// memory where [`MAX_FILE_LEN`] alone would not; a longer case is a
/// failure, not parsed.
pub const MAX_CASE_LEN: usize = 1 << 20;

/// The schema this runner understands.
pub const SCHEMA: &str = "kemsphinx-vectors/1";

/// The failures a run keeps to print: the first 1,000. The rest are
/// counted, never stored, so that a run's memory does not grow with the
/// number of failing cases (an 8 MiB file of `{}` holds 2.8 million).
pub const MAX_KEPT_FAILURES: usize = 1_000;

/// The longest case id or reason kept, in characters; longer ones are cut
/// and end in `…` (a case id is the file's text and may be megabytes).
pub const MAX_FAILURE_TEXT: usize = 200;

/// One failing case.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The file it came from.
    pub file: PathBuf,
    /// The case id (or `-` for a file-level failure).
    pub id: String,
    /// Why it failed.
    pub reason: String,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Cases that passed.
    pub passed: usize,
    /// Cases (and files) that failed.
    pub failed: usize,
    /// The first [`MAX_KEPT_FAILURES`] of them, to print.
    pub failures: Vec<Failure>,
    /// Files read.
    pub files: usize,
    /// Cases per kind, passed or not.
    pub kinds: std::collections::BTreeMap<String, usize>,
    /// Files and folders visited so far.
    visited: HashSet<FileId>,
}

/// Device and inode on Unix, else the canonical path.
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

/// What makes two paths the same file or folder.
#[cfg(unix)]
fn file_id(_path: &Path, meta: &Metadata) -> std::io::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    Ok((meta.dev(), meta.ino()))
}

/// What makes two paths the same file or folder.
#[cfg(not(unix))]
fn file_id(path: &Path, _meta: &Metadata) -> std::io::Result<FileId> {
    fs::canonicalize(path)
}

/// `text` with every control character (C0, DEL, C1), Unicode
/// bidirectional control and backslash escaped as Rust writes them
/// (`\u{1b}`, `\n`, `\\`), so that text from a vector file cannot move the
/// cursor, rewrite a line or reorder what a terminal shows.
#[must_use]
pub fn printable(text: &str) -> String {
    let escape = |c: char| {
        c.is_control()
            || c == '\\'
            || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

impl Report {
    /// Verify a file, or every `*.json` file under a folder (sorted,
    /// recursive), as the module documentation says.
    pub fn verify_path(&mut self, path: &Path) {
        self.visit(path, files::open(path));
    }

    /// What was opened, judged by its own metadata: a folder is walked,
    /// anything else is a vector file.
    fn visit(&mut self, path: &Path, opened: std::io::Result<(fs::File, Metadata)>) {
        match opened {
            Ok((file, meta)) if meta.is_dir() => self.walk(path, file, &meta),
            Ok((file, meta)) => self.verify_opened(path, file, &meta),
            Err(e) => self.fail(path, "-", format!("cannot read: {e}")),
        }
    }

    /// Walk an opened folder: its folders, and its `*.json` names, each
    /// opened relative to the folder without following a link
    /// (`openat` with `O_NOFOLLOW`), then judged by what was opened. An
    /// entry swapped for a link after the folder was listed is refused
    /// at the open, never followed.
    #[cfg(unix)]
    fn walk(&mut self, dir: &Path, opened: fs::File, meta: &Metadata) {
        use rustix::fs::{Mode, OFlags};
        use std::ffi::{OsStr, OsString};
        use std::os::unix::ffi::OsStrExt;
        if !self.first_visit(dir, meta) {
            return;
        }
        let listing = match rustix::fs::Dir::read_from(&opened) {
            Ok(listing) => listing,
            Err(e) => return self.fail(dir, "-", format!("cannot read folder: {e}")),
        };
        let mut names: Vec<OsString> = listing
            .filter_map(|e| Some(OsStr::from_bytes(e.ok()?.file_name().to_bytes()).into()))
            .filter(|name| name != "." && name != "..")
            .collect();
        names.sort();
        for name in names {
            let entry = dir.join(&name);
            let json = entry.extension().is_some_and(|x| x == "json");
            // Any other name is opened only if it is a folder
            // (`O_DIRECTORY`), so that nothing else (a device, a FIFO) is
            // ever opened by a walk.
            let mut flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            flags.set(OFlags::DIRECTORY, !json);
            match rustix::fs::openat(&opened, name.as_os_str(), flags, Mode::empty()) {
                Ok(fd) => self.visit(&entry, files::with_metadata(fd.into())),
                // A link (`ELOOP`), or not a folder: not followed or not
                // opened; a `*.json` link is a failure.
                Err(rustix::io::Errno::LOOP) if json => {
                    let why = "a link: followed only when named, never inside a folder";
                    self.fail(&entry, "-", why.into());
                }
                Err(_) if !json => {}
                Err(e) => self.fail(&entry, "-", format!("cannot read: {e}")),
            }
        }
    }

    /// Off Unix a folder is refused, not walked: without `openat`, an
    /// entry swapped for a link between the listing and the open would be
    /// followed out of the folder. Its files can still be named.
    #[cfg(not(unix))]
    fn walk(&mut self, dir: &Path, _: fs::File, _: &Metadata) {
        let why = "a folder: walked only on Unix (no `openat` here); name its files";
        self.fail(dir, "-", why.into());
    }

    /// Whether this file or folder is seen for the first time in this run.
    fn first_visit(&mut self, path: &Path, meta: &Metadata) -> bool {
        file_id(path, meta).map_or(true, |id| self.visited.insert(id))
    }

    /// Verify an opened file (a regular file of at most [`MAX_FILE_LEN`]
    /// bytes), judged by its own metadata `meta`.
    fn verify_opened(&mut self, path: &Path, file: fs::File, meta: &Metadata) {
        if !self.first_visit(path, meta) {
            return;
        }
        self.files += 1;
        if let Err(why) = files::regular_within(meta, MAX_FILE_LEN) {
            return self.fail(path, "-", why);
        }
        let mut text = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        if let Err(e) = files::read_at_most(file, MAX_FILE_LEN, &mut text) {
            return self.fail(path, "-", format!("cannot read: {e}"));
        }
        self.verify_text(path, &text);
    }

    /// A `kemsphinx-vectors/1` file's text: its header first, then its
    /// cases one at a time (see [`stream`]), so that memory holds the text
    /// and one case, however many cases there are.
    fn verify_text(&mut self, path: &Path, text: &[u8]) {
        let header = match stream::header(text) {
            Ok(header) => header,
            Err(why) => return self.fail(path, "-", why),
        };
        let schema = match header.schema.as_deref() {
            Some(SCHEMA) => None,
            Some(other) => Some(format!("unknown schema `{other}`")),
            None => Some("no `schema` field".to_owned()),
        };
        if let Some(why) = schema {
            return self.fail(path, "-", format!("{why} (this runner reads {SCHEMA})"));
        }
        let Some(cases) = header.cases.filter(|c| c.get().starts_with('[')) else {
            return self.fail(path, "-", "no `cases` list".into());
        };
        let kind = header.kind.as_deref().unwrap_or("");
        let check: fn(&str, &Value) -> crate::json::Outcome = match kind {
            "aez" | "kdf" | "stream" | "mac" | "replay_tag" => primitives::primitive,
            "kem" => |_, c| primitives::kem(c),
            "forward" => |_, c| packets::forward(c),
            "surb" => |_, c| packets::surb(c),
            "negative" => |_, c| negative::negative(c),
            other => return self.fail(path, "-", format!("unknown kind `{other}`")),
        };
        let mut count = 0;
        let streamed = stream::cases(cases, &mut |case| {
            let id = case.as_ref().ok().and_then(|c| c.get("id")?.as_str());
            let id = id.map_or_else(|| format!("#{count}"), str::to_owned);
            count += 1;
            // A panic is caught and counted as the case's failure.
            let outcome = case.and_then(|case| {
                catch_unwind(AssertUnwindSafe(|| check(kind, &case))).unwrap_or(Err("PANIC".into()))
            });
            match outcome {
                Ok(()) => self.passed += 1,
                Err(reason) => self.fail(path, &id, reason),
            }
        });
        if let Err(why) = streamed {
            self.fail(path, "-", why);
        }
        if count == 0 {
            return self.fail(path, "-", "no cases".into());
        }
        *self.kinds.entry(kind.to_owned()).or_default() += count;
    }

    /// Record a failure: counted always, kept while fewer than
    /// [`MAX_KEPT_FAILURES`] are, with its id and reason cut to
    /// [`MAX_FAILURE_TEXT`] characters.
    fn fail(&mut self, file: &Path, id: &str, reason: String) {
        self.failed += 1;
        if self.failures.len() < MAX_KEPT_FAILURES {
            self.failures.push(Failure {
                file: file.to_owned(),
                id: cut(id).into_owned(),
                reason: cut(&reason).into_owned(),
            });
        }
    }

    /// Failures counted but not kept.
    #[must_use]
    pub fn not_shown(&self) -> usize {
        self.failed - self.failures.len()
    }

    /// Whether the run counts as a pass: something passed, nothing failed.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.passed > 0 && self.failed == 0
    }

    /// The closing line, `N passed, M failed`.
    #[must_use]
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }

    /// A machine-readable summary.
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "schema": SCHEMA,
            "passed": self.passed,
            "failed": self.failed,
            "failures_not_shown": self.not_shown(),
            "files": self.files,
            "cases_per_kind": self.kinds,
            "failures": self.failures.iter().map(|f| serde_json::json!({
                "file": f.file.display().to_string(), "id": f.id, "reason": f.reason,
            })).collect::<Vec<_>>(),
        })
    }

    /// One line per kept failure, and one saying how many were not kept.
    #[must_use]
    pub fn failure_lines(&self) -> String {
        let line = |f: &Failure| {
            let (file, id) = (f.file.display().to_string(), printable(&f.id));
            format!("FAIL {} {id}: {}\n", printable(&file), printable(&f.reason))
        };
        let mut lines: String = self.failures.iter().map(line).collect();
        if self.not_shown() > 0 {
            lines += &format!("... and {} more failures, not shown\n", self.not_shown());
        }
        lines
    }
}

/// `text` cut to [`MAX_FAILURE_TEXT`] characters.
fn cut(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(MAX_FAILURE_TEXT) {
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
        None => Cow::Borrowed(text),
    }
}
