//! The shell options a user's config may set that change what a file-name
//! pattern becomes, bash's and zsh's: each command is judged under every
//! combination that can change it.

/// Which shell expands a pattern, and the options that change what it
/// matches. Agents run commands in a shell that has read the user's own
/// configuration (Claude Code sources a snapshot of it first; Codex runs
/// `zsh -lc`, which reads `.zshenv` and `.zprofile`), which may set any of
/// them: a pattern is judged under each combination ([`Shopts::every`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Shopts {
    /// zsh expands the pattern (its own rules: `**/` always recursive,
    /// `.` and `..` never matched, a literal component of a pattern
    /// matched in any case under `NO_CASE_GLOB`).
    pub zsh: bool,
    /// `*` and `?` match a leading `.` too (`cat *` prints `.env`); zsh's
    /// `GLOB_DOTS`.
    pub dotglob: bool,
    /// Patterns match in any case (`cat .EN?` prints `.env`); zsh's
    /// `NO_CASE_GLOB`.
    pub nocaseglob: bool,
    /// bash: `**` alone as a component matches files and directories at
    /// any depth (`cat **/x` reads `a/b/x`). zsh: `GLOB_STAR_SHORT`, a
    /// component starting with `**` is `**/` and the rest (`**.json` reads
    /// `a/b/x.json`).
    pub globstar: bool,
    /// A pattern that matches nothing is removed, not passed as written
    /// (zsh's `NULL_GLOB`, and `CSH_NULL_GLOB` when another matched).
    pub nullglob: bool,
    /// zsh's `EXTENDED_GLOB`: `^`, `#`, `##` and `~` are pattern operators.
    pub extendedglob: bool,
}

impl Shopts {
    /// Every combination, bash's defaults (all off) first, then zsh's.
    pub fn every() -> impl Iterator<Item = Self> {
        (0..64u8)
            .map(|bits| Self {
                dotglob: bits & 1 != 0,
                nocaseglob: bits & 2 != 0,
                globstar: bits & 4 != 0,
                nullglob: bits & 8 != 0,
                zsh: bits & 16 != 0,
                extendedglob: bits & 32 != 0,
            })
            .filter(|s| s.zsh || !s.extendedglob)
    }

    /// The options set, as `shopt -s` (bash) or `setopt` (zsh) names them.
    pub fn set(self) -> String {
        let names: &[(bool, &str)] = if self.zsh {
            &[
                (self.dotglob, "globdots"),
                (self.nocaseglob, "nocaseglob"),
                (self.globstar, "globstarshort"),
                (self.nullglob, "nullglob"),
                (self.extendedglob, "extendedglob"),
            ]
        } else {
            &[
                (self.dotglob, "dotglob"),
                (self.nocaseglob, "nocaseglob"),
                (self.globstar, "globstar"),
                (self.nullglob, "nullglob"),
            ]
        };
        names
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Why a command is not covered, saying under which shell and options
    /// when they are not bash's defaults.
    pub fn explain(self, why: String) -> String {
        match (self.zsh, self.set()) {
            (false, set) if set.is_empty() => why,
            (false, set) => format!("with `shopt -s {set}` (a user's shell config may set it): {why}"),
            (true, set) if set.is_empty() => format!("when zsh runs it: {why}"),
            (true, set) => format!("when zsh runs it with `setopt {set}` (a user's .zshenv may set it): {why}"),
        }
    }

    /// Everything on: for finding a secret (at least every name bash could
    /// match under any setting).
    pub(super) const WIDEST: Self = Self {
        zsh: false,
        dotglob: true,
        nocaseglob: true,
        globstar: true,
        nullglob: false,
        extendedglob: false,
    };
}
