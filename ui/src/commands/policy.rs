//! `tether policy init AGENT [--write [FILE]]`: a starter policy, printed or
//! written (never over an existing file), checked before it is written.

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, bail};

use crate::files::policy::{Policy, Starter, Variant, default_path};
use crate::files::source::Document;

/// Prints or writes the starter.
/// `write`: `None` prints; `Some(None)` writes the default place; `Some(Some(FILE))` writes FILE.
pub fn init(
    agent: Starter,
    variant: Variant,
    write: Option<Option<&Path>>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let text = agent.file_text(variant);
    // A starter that does not load would be a bug here, not the user's.
    let document = Document::parse(format!("{} starter", agent.name()), text.clone())
        .map_err(|e| anyhow::anyhow!("the {} starter does not parse: {}", agent.name(), e[0]))?;
    let policy = Policy::from_document(&document)
        .map_err(|e| anyhow::anyhow!("the {} starter does not load: {}", agent.name(), e[0]))?;
    let Some(target) = write else {
        return out.write_all(text.as_bytes()).context("writing the policy");
    };
    let target = match target {
        Some(file) => file.to_path_buf(),
        None => default_path().context("no default policy place: set XDG_CONFIG_HOME or HOME, or give --write FILE")?,
    };
    if target.exists() {
        bail!(
            "{} already exists; it is left as it is (remove it, or give --write another file)",
            target.display()
        );
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // `create_new`: a file that appeared since the check above is not overwritten.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .with_context(|| format!("creating {}", target.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", target.display()))?;
    let _ = writeln!(
        out,
        "wrote the {} starter policy ({} rules) to {}",
        agent.name(),
        policy.rules.len(),
        target.display()
    );
    Ok(())
}
