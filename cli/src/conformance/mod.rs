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
//! walk never leaves the folder it was given. Every file and folder is
//! visited at most once per run, told apart by device and inode (by
//! canonical path off Unix): a file named twice counts once. Only regular
//! files of at most [`MAX_FILE_LEN`] bytes are read; anything else named
//! (a folder's `*.json` FIFO, a device, `/dev/zero`, a 3 GB file) is a
//! failure found from the opened file's metadata, without blocking and
//! without reading it. Paths are kept as the operating system gives them
//! (not necessarily UTF-8) and printed lossily.
//! Text from the files (case ids, kinds, schemas) and file names are
//! printed with control characters escaped ([`printable`]).

mod negative;
mod packets;
mod primitives;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs::{self, Metadata};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files;

pub(crate) use negative::negative as check_negative;
pub use negative::{action_class, error_class};

/// The largest vector file read: 16 MiB, seven times the largest real one
/// (`vectors/own/negative.json`, 2.3 MB).
pub const MAX_FILE_LEN: u64 = 16 << 20;

/// The schema this runner understands.
pub const SCHEMA: &str = "kemsphinx-vectors/1";

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
    pub failures: Vec<Failure>,
    /// Files read.
    pub files: usize,
    /// Cases per kind, passed or not.
    pub kinds: std::collections::BTreeMap<String, usize>,
    /// Files and folders visited so far.
    visited: HashSet<FileId>,
}

/// What makes two paths the same file or folder.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileId {
    /// Device and inode.
    #[cfg(unix)]
    Inode(u64, u64),
    /// The canonical path, where there are no inodes.
    #[cfg(not(unix))]
    Path(PathBuf),
}

impl FileId {
    #[cfg(unix)]
    fn of(_path: &Path, meta: &Metadata) -> std::io::Result<Self> {
        use std::os::unix::fs::MetadataExt;
        Ok(Self::Inode(meta.dev(), meta.ino()))
    }

    #[cfg(not(unix))]
    fn of(path: &Path, _meta: &Metadata) -> std::io::Result<Self> {
        fs::canonicalize(path).map(Self::Path)
    }
}

/// `text` with every control character (C0, DEL, C1), Unicode
/// bidirectional control and backslash escaped as Rust writes them
/// (`\u{1b}`, `\n`, `\\`), so that text from a vector file cannot move the
/// cursor, rewrite a line or reorder what a terminal shows.
#[must_use]
pub fn printable(text: &str) -> Cow<'_, str> {
    let escape = |c: char| {
        c.is_control()
            || c == '\\'
            || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

impl Report {
    /// Verify a file, or every `*.json` file under a folder (sorted,
    /// recursive), each file and folder at most once per run. A link is
    /// followed when it is `path` itself (named on the command line), never
    /// while walking.
    pub fn verify_path(&mut self, path: &Path) {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => self.walk(path, &meta),
            Ok(_) => self.verify_file(path),
            Err(e) => self.fail(path, "-", format!("cannot read: {e}")),
        }
    }

    /// Walk a folder: its folders, and its `*.json` names (a link, or
    /// anything else that is not a regular file, is a failure).
    fn walk(&mut self, dir: &Path, meta: &Metadata) {
        if !self.first_visit(dir, meta) {
            return;
        }
        let mut entries: Vec<(PathBuf, fs::FileType)> = match fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().and_then(|e| Some((e.path(), e.file_type().ok()?))))
                .collect(),
            Err(e) => return self.fail(dir, "-", format!("cannot read folder: {e}")),
        };
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (entry, kind) in entries {
            if kind.is_dir() {
                match fs::symlink_metadata(&entry) {
                    Ok(meta) if meta.is_dir() => self.walk(&entry, &meta),
                    Ok(_) => {}
                    Err(e) => self.fail(&entry, "-", format!("cannot read folder: {e}")),
                }
            } else if entry.extension().is_some_and(|x| x == "json") {
                if kind.is_symlink() {
                    let why = "a link: followed only when named, never inside a folder";
                    self.fail(&entry, "-", why.into());
                } else {
                    self.verify_file(&entry);
                }
            }
        }
    }

    /// Whether this file or folder is seen for the first time in this run.
    fn first_visit(&mut self, path: &Path, meta: &Metadata) -> bool {
        match FileId::of(path, meta) {
            Ok(id) => self.visited.insert(id),
            Err(_) => true,
        }
    }

    /// Verify one file: a regular file of at most [`MAX_FILE_LEN`] bytes
    /// (anything else is a failure, found without blocking or reading it).
    pub fn verify_file(&mut self, path: &Path) {
        let (file, meta) = match files::open(path) {
            Ok(opened) => opened,
            Err(e) => return self.fail(path, "-", format!("cannot read: {e}")),
        };
        if !self.first_visit(path, &meta) {
            return;
        }
        self.files += 1;
        if let Err(why) = files::regular_within(&meta, MAX_FILE_LEN) {
            return self.fail(path, "-", why);
        }
        let mut text = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        if let Err(e) = files::read_at_most(file, MAX_FILE_LEN, &mut text) {
            return self.fail(path, "-", format!("cannot read: {e}"));
        }
        match serde_json::from_slice(&text) {
            Ok(doc @ Value::Object(_)) => self.verify_schema_file(path, &doc),
            Ok(_) => self.fail(path, "-", format!("not a {SCHEMA} object")),
            Err(e) => self.fail(path, "-", format!("not JSON: {e}")),
        }
    }

    /// A `kemsphinx-vectors/1` file.
    fn verify_schema_file(&mut self, path: &Path, doc: &Value) {
        let schema = match doc.get("schema").and_then(Value::as_str) {
            Some(SCHEMA) => None,
            Some(other) => Some(format!("unknown schema `{other}`")),
            None => Some("no `schema` field".to_owned()),
        };
        if let Some(why) = schema {
            return self.fail(path, "-", format!("{why} (this runner reads {SCHEMA})"));
        }
        let Some(cases) = doc.get("cases").and_then(Value::as_array) else {
            return self.fail(path, "-", "no `cases` list".into());
        };
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        let check: fn(&Value) -> crate::json::Outcome = match kind {
            "kem" => primitives::kem,
            "aez" => |c| primitives::primitive("aez", c),
            "kdf" => |c| primitives::primitive("kdf", c),
            "stream" => |c| primitives::primitive("stream", c),
            "mac" => |c| primitives::primitive("mac", c),
            "replay_tag" => |c| primitives::primitive("replay_tag", c),
            "forward" => packets::forward,
            "surb" => packets::surb,
            "negative" => negative::negative,
            other => return self.fail(path, "-", format!("unknown kind `{other}`")),
        };
        self.run_cases(path, kind, cases, check);
    }

    /// Run every case of a file, catching panics as failures.
    fn run_cases(
        &mut self,
        path: &Path,
        kind: &str,
        cases: &[Value],
        check: impl Fn(&Value) -> crate::json::Outcome,
    ) {
        if cases.is_empty() {
            return self.fail(path, "-", "no cases".into());
        }
        for (n, case) in cases.iter().enumerate() {
            *self.kinds.entry(kind.to_owned()).or_default() += 1;
            let id = case
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{n}"), str::to_owned);
            match catch_unwind(AssertUnwindSafe(|| check(case))) {
                Ok(Ok(())) => self.passed += 1,
                Ok(Err(reason)) => self.fail(path, &id, reason),
                Err(_) => self.fail(path, &id, "PANIC".into()),
            }
        }
    }

    /// Record a failure.
    fn fail(&mut self, file: &Path, id: &str, reason: String) {
        self.failures.push(Failure {
            file: file.to_owned(),
            id: id.to_owned(),
            reason,
        });
    }

    /// Whether the run counts as a pass: something passed, nothing failed.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.passed > 0 && self.failures.is_empty()
    }

    /// The closing line, `N passed, M failed`.
    #[must_use]
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failures.len())
    }

    /// A machine-readable summary.
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "schema": SCHEMA,
            "passed": self.passed,
            "failed": self.failures.len(),
            "files": self.files,
            "cases_per_kind": self.kinds,
            "failures": self.failures.iter().map(|f| serde_json::json!({
                "file": f.file.display().to_string(), "id": f.id, "reason": f.reason,
            })).collect::<Vec<_>>(),
        })
    }

    /// One line per failure.
    #[must_use]
    pub fn failure_lines(&self) -> String {
        let mut out = String::new();
        for f in &self.failures {
            let file = f.file.display().to_string();
            let _ = writeln!(
                out,
                "FAIL {} {}: {}",
                printable(&file),
                printable(&f.id),
                printable(&f.reason)
            );
        }
        out
    }
}
