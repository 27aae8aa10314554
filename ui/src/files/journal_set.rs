//! A journal rotated by size is a set of numbered files read as one:
//! `PATH` first, then `PATH.1`, `PATH.2`, … in that order. A batch's records
//! are never split between two files.

use std::path::{Path, PathBuf};

/// The `number`th file of the set named after `base` (0 is `base` itself).
pub fn numbered(base: &Path, number: u32) -> PathBuf {
    if number == 0 {
        return base.to_owned();
    }
    let mut name = base.as_os_str().to_owned();
    name.push(format!(".{number}"));
    PathBuf::from(name)
}

/// The number of the newest file of the set that exists (0 when none does).
pub fn newest_number(base: &Path) -> u32 {
    let mut number = 0;
    while numbered(base, number + 1).exists() {
        number += 1;
    }
    number
}

/// Every file of the set, oldest first (just `base` when it was never rotated).
pub fn files(base: &Path) -> Vec<PathBuf> {
    (0..=newest_number(base)).map(|n| numbered(base, n)).collect()
}

/// The text of the whole set, files joined in order (each ends in a newline).
///
/// # Errors
/// A file of the set cannot be read.
pub fn read_text(base: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    for path in files(base) {
        text.push_str(&std::fs::read_to_string(path)?);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_set_is_its_files_in_number_order() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("j.jsonl");
        std::fs::write(&base, "a\n").unwrap();
        assert_eq!(newest_number(&base), 0);
        std::fs::write(numbered(&base, 1), "b\n").unwrap();
        std::fs::write(numbered(&base, 2), "c").unwrap();
        assert_eq!(files(&base).len(), 3);
        assert_eq!(read_text(&base).unwrap(), "a\nb\nc\n");
        assert!(numbered(&base, 2).display().to_string().ends_with("j.jsonl.2"));
    }
}
