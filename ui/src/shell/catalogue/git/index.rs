//! The paths the index holds (`.git/index`), read without git: a plain
//! `git diff` and `git grep --cached` print what the index and the files it
//! tracks hold, and are judged on every call, so spawning git for them
//! would cost each call milliseconds. The format (versions 2 to 4) is
//! small; the gix crates read it too, but add minutes of compiling to CI
//! for one function. What this reader does not know — another version, a
//! split or sparse index, a file that does not parse whole — is an error:
//! the command is not covered.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::secrets;

/// At most this many secret paths are kept (one is enough to refuse).
const MAX_KEPT: usize = 20;

/// What the index holds, as far as a judge needs it.
#[derive(Clone, Debug, Default)]
pub(super) struct Index {
    /// Paths that name secrets.
    pub secrets: Vec<String>,
    /// Of those, the ones `git grep` reads from the index, not the disk
    /// (assume-unchanged or skip-worktree).
    pub read_from_index: Vec<String>,
    /// Whether it holds a submodule.
    pub submodules: bool,
}

type Cached = (u64, Result<Index, String>);

static CACHE: Mutex<Option<HashMap<PathBuf, Cached>>> = Mutex::new(None);

/// The secret paths the index of `git_dir` holds, read again only when the
/// index file changes.
pub(super) fn secrets(git_dir: &Path) -> Result<Vec<String>, String> {
    read(git_dir).map(|index| index.secrets)
}

/// What the index of `git_dir` holds, read again only when the index file
/// changes.
pub(super) fn read(git_dir: &Path) -> Result<Index, String> {
    let path = git_dir.join("index");
    let state = match std::fs::metadata(&path) {
        Ok(meta) => {
            use std::hash::{Hash, Hasher};
            use std::os::unix::fs::MetadataExt;
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            (
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ctime(),
                meta.ctime_nsec(),
                meta.ino(),
            )
                .hash(&mut hasher);
            hasher.finish()
        }
        // No index: nothing staged, nothing tracked.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Index::default()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((seen, found)) = cache.get(&path)
        && *seen == state
    {
        return found.clone();
    }
    let found = std::fs::read(&path)
        .map_err(|e| format!("{}: {e}", path.display()))
        .and_then(|bytes| entries(&bytes))
        .map(|all| {
            let mut index = Index::default();
            for entry in all {
                index.submodules |= entry.mode & 0o170000 == 0o160000;
                if index.secrets.len() < MAX_KEPT && secrets::why(&entry.path).is_some() {
                    if entry.from_index {
                        index.read_from_index.push(entry.path.clone());
                    }
                    index.secrets.push(entry.path);
                }
            }
            index
        })
        .map_err(|e| format!("the index cannot be read ({e}): what it holds is not known"));
    if cache.len() > 64 {
        cache.clear();
    }
    cache.insert(path, (state, found.clone()));
    found
}

/// One entry of the index.
pub(super) struct Entry {
    pub path: String,
    pub mode: u32,
    /// Assume-unchanged (`CE_VALID`) or skip-worktree: git reads the file
    /// from the index where it would read the disk.
    pub from_index: bool,
}

/// Every entry an index file holds, for object ids of SHA-1 or SHA-256
/// (whichever the file parses whole with).
pub(super) fn entries(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    parse(bytes, 20).or_else(|first| parse(bytes, 32).map_err(|_| first))
}

/// `CE_VALID` in an entry's flags; skip-worktree in its extended flags.
const ASSUME_UNCHANGED: u16 = 0x8000;
const SKIP_WORKTREE: u16 = 0x4000;

fn parse(bytes: &[u8], hash: usize) -> Result<Vec<Entry>, String> {
    let mut at = Cursor { bytes, at: 0 };
    if at.take(4)? != b"DIRC" {
        return Err("not an index file".into());
    }
    let version = at.u32()?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version}"));
    }
    let count = at.u32()? as usize;
    let mut names = Vec::with_capacity(count.min(1 << 20));
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at.at;
        // ctime, mtime, dev, ino (24 bytes), then mode.
        at.take(24)?;
        let mode = at.u32()?;
        // uid, gid, size, the object id, flags.
        at.take(12 + hash)?;
        let flags = u16::from_be_bytes([at.byte()?, at.byte()?]);
        let mut extended = 0;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return Err("an extended entry in a version 2 index".into());
            }
            extended = u16::from_be_bytes([at.byte()?, at.byte()?]);
        }
        // A sparse index keeps a directory as one entry: what is in it
        // is not listed.
        if mode & 0o170000 == 0o040000 {
            return Err("a sparse index".into());
        }
        let name = if version == 4 {
            let strip = at.varint()?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or("a path that strips more than the previous one holds")?;
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(at.until_nul()?);
            name
        } else {
            let name = at.until_nul()?.to_vec();
            // Entries are padded with NULs to a multiple of 8 bytes.
            let len = at.at - start;
            at.take((8 - len % 8) % 8)?;
            name
        };
        names.push(Entry {
            path: String::from_utf8_lossy(&name).into_owned(),
            mode,
            from_index: flags & ASSUME_UNCHANGED != 0 || extended & SKIP_WORKTREE != 0,
        });
        previous = name;
    }
    // Extensions, then the checksum.
    while at.at + hash < bytes.len() {
        let signature = at.take(4)?;
        if signature == b"link" || signature == b"sdir" {
            return Err(format!(
                "a {} index",
                if signature == b"link" { "split" } else { "sparse" }
            ));
        }
        let size = at.u32()? as usize;
        at.take(size)?;
    }
    if at.at + hash != bytes.len() {
        return Err("the index does not end where its entries and extensions do".into());
    }
    Ok(names)
}

struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or("the index ends early")?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn until_nul(&mut self) -> Result<&'b [u8], String> {
        let rest = &self.bytes[self.at..];
        let len = rest.iter().position(|b| *b == 0).ok_or("a path with no end")?;
        self.at += len + 1;
        Ok(&rest[..len])
    }

    /// git's offset varint (`decode_varint`).
    fn varint(&mut self) -> Result<usize, String> {
        let mut byte = self.byte()?;
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.byte()?;
            value = value
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .and_then(|v| v.checked_add(usize::from(byte & 0x7f)))
                .ok_or("a varint too large")?;
        }
        Ok(value)
    }
}
