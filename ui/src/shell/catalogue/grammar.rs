//! The one matcher: a program's words read against its grammar the way the
//! program's own option parser reads them (GNU `getopt_long`: an
//! unambiguous prefix of a long option is that option, short options
//! bundle and take the rest of their word as a value, options may follow
//! operands until `--`). It never special-cases a program.

pub(super) use super::effects::{Effects, Notes};
use super::table::{Filter, Kind, Opt, Program, Role, Takes};

/// A command read whole: the program (a subcommand where there is one),
/// the paths it reads, and what its options change.
pub(super) struct Parsed<'w> {
    pub program: &'static Program,
    /// Every path it reads: operands and options' values.
    pub paths: Vec<&'w str>,
    /// Every path whose metadata only it reads.
    pub metas: Vec<&'w str>,
    /// The operands that are paths: where a recursive read starts (an
    /// option's value, `grep -r -f PATS`, is read, never walked; with no
    /// such operand the walk starts at `.`).
    pub starts: Vec<&'w str>,
    /// The filters its options put on a walk, in order.
    pub filters: Vec<(Filter, &'w str)>,
    /// Every operand and option's value, with the kind it was read as and
    /// whether it is an operand (a recursive read walks an operand path,
    /// and only reads an option's).
    pub roles: Vec<(&'w str, Kind, bool)>,
    pub effects: Effects,
}

/// Reads `words` (the arguments, program name excluded) as `program` does.
pub(super) fn read<'w>(program: &'static Program, words: &[&'w str], notes: &mut Notes) -> Result<Parsed<'w>, String> {
    let mut reader = Reader {
        program,
        words,
        at: 0,
        paths: Vec::new(),
        metas: Vec::new(),
        starts: Vec::new(),
        filters: Vec::new(),
        roles: Vec::new(),
        in_operands: false,
        operands: Vec::new(),
        effects: Effects::default(),
        given: Vec::new(),
        ends_at_operand: super::shadow::options_end_at_operand(program),
    };
    if program.syntax.words {
        reader.words_syntax(notes)?;
    } else {
        while reader.at < words.len() {
            if !program.subcommands.is_empty() && reader.word_is_operand() {
                return reader.subcommand(notes);
            }
            reader.next(notes)?;
        }
    }
    reader.finish(notes)
}

struct Reader<'a, 'w> {
    program: &'static Program,
    words: &'a [&'w str],
    at: usize,
    paths: Vec<&'w str>,
    metas: Vec<&'w str>,
    starts: Vec<&'w str>,
    filters: Vec<(Filter, &'w str)>,
    roles: Vec<(&'w str, Kind, bool)>,
    /// The operands are being read (every option is).
    in_operands: bool,
    operands: Vec<&'w str>,
    effects: Effects,
    given: Vec<&'static Opt>,
    /// Every word after the first operand is an operand (bash's builtins;
    /// `getopt_long` under `POSIXLY_CORRECT`).
    ends_at_operand: bool,
}

impl<'w> Reader<'_, 'w> {
    fn word_is_operand(&self) -> bool {
        let word = self.words[self.at];
        self.program.syntax.none || word == "-" || !word.starts_with('-')
    }

    /// The subcommand the first operand names, reading the rest.
    fn subcommand(self, notes: &mut Notes) -> Result<Parsed<'w>, String> {
        let name = self.words[self.at];
        let Some(sub) = self.program.subcommands.iter().find(|s| s.name == name) else {
            return Err(format!(
                "`{} {name}` is not in the read-only catalogue (it covers {})",
                self.program.name,
                self.program
                    .subcommands
                    .iter()
                    .map(|s| format!("`{} {}`", self.program.name, s.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        notes.note(name, || format!("subcommand `{} {}`", self.program.name, sub.name));
        let mut parsed = read(sub, &self.words[self.at + 1..], notes)?;
        parsed.paths.extend(self.paths);
        parsed.metas.extend(self.metas);
        parsed.roles.extend(self.roles);
        Ok(parsed)
    }

    fn next(&mut self, notes: &mut Notes) -> Result<(), String> {
        let words = self.words;
        let word = words[self.at];
        self.at += 1;
        let syntax = self.program.syntax;
        let stopped = self.ends_at_operand && !self.operands.is_empty();
        if syntax.none || stopped || word == "-" || !word.starts_with('-') {
            self.operands.push(word);
            return Ok(());
        }
        if word == "--" {
            notes.note(word, || "the end of the options".into());
            while self.at < words.len() {
                self.operands.push(words[self.at]);
                self.at += 1;
            }
            return Ok(());
        }
        if let Some(long) = word.strip_prefix("--") {
            return self.long(word, long, notes);
        }
        if syntax.counts && word[1..].bytes().all(|b| b.is_ascii_digit()) {
            notes.note(word, || "a count".into());
            return Ok(());
        }
        self.shorts(word, notes)
    }

    fn long(&mut self, word: &'w str, long: &'w str, notes: &mut Notes) -> Result<(), String> {
        let (name, attached) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let opt = self.resolve_long(word, name)?;
        self.allowed(word, opt)?;
        let shown = || opt.shown(self.program.syntax);
        match (opt.takes, attached) {
            (Takes::Nothing, Some(_)) => Err(format!("`{word}`: {} takes no value", shown())),
            (Takes::Nothing, None) | (Takes::Optional(_), None) => {
                notes.note(word, || format!("option {}", shown()));
                Ok(())
            }
            (Takes::Value(kind) | Takes::Optional(kind), Some(value)) => {
                notes.note(word, || format!("option {} with its value", shown()));
                self.value(word, value, kind)
            }
            (Takes::Value(kind), None) => {
                notes.note(word, || format!("option {}", shown()));
                let value = self.take_value(word)?;
                notes.note(value, || format!("the value of {}", shown()));
                self.value(value, value, kind)
            }
        }
    }

    fn resolve_long(&self, word: &str, name: &str) -> Result<&'static Opt, String> {
        let options = self.program.options;
        if let Some(exact) = options.iter().find(|o| !o.long.is_empty() && o.long == name) {
            return Ok(exact);
        }
        if self.program.syntax.prefixes && !name.is_empty() {
            let mut found = options
                .iter()
                .filter(|o| !o.long.is_empty() && o.long.starts_with(name));
            if let Some(first) = found.next() {
                let others: Vec<&Opt> = found.collect();
                if others.is_empty() {
                    return Ok(first);
                }
                return Err(format!(
                    "`{word}` is ambiguous: it abbreviates --{}{}",
                    first.long,
                    others.iter().map(|o| format!(", --{}", o.long)).collect::<String>()
                ));
            }
        }
        Err(self.unknown(word))
    }

    fn unknown(&self, word: &str) -> String {
        format!("`{word}` is not an option the grammar of `{}` knows", self.program.name)
    }

    fn allowed(&mut self, word: &str, opt: &'static Opt) -> Result<(), String> {
        match opt.role {
            Role::Refused(why) => Err(format!("`{word}` is {}, which {why}", opt.shown(self.program.syntax))),
            Role::Effect(effects) => {
                self.effects.add(effects);
                self.given.push(opt);
                Ok(())
            }
            Role::Safe => {
                self.given.push(opt);
                Ok(())
            }
        }
    }

    /// A bundle of short options (`-la`, `-uo FILE`, `-n5`).
    fn shorts(&mut self, word: &'w str, notes: &mut Notes) -> Result<(), String> {
        let letters = &word[1..];
        for (offset, letter) in letters.char_indices() {
            if offset > 0 && !self.program.syntax.bundles {
                return Err(format!(
                    "`{word}` bundles short options, which `{}` does not read as a bundle",
                    self.program.name
                ));
            }
            let opt = self
                .program
                .options
                .iter()
                .find(|o| o.short == Some(letter))
                .ok_or_else(|| {
                    if offset == 0 {
                        self.unknown(word)
                    } else {
                        format!(
                            "`{word}`: -{letter} is not an option the grammar of `{}` knows",
                            self.program.name
                        )
                    }
                })?;
            self.allowed(word, opt)?;
            let rest = &letters[offset + letter.len_utf8()..];
            let shown = || opt.shown(self.program.syntax);
            match opt.takes {
                Takes::Nothing => notes.note(word, || format!("option {}", shown())),
                Takes::Optional(_) | Takes::Value(_) if !rest.is_empty() && !self.program.syntax.joined => {
                    return Err(format!(
                        "`{word}` joins a value to {}, which `{}` does not read as its value",
                        shown(),
                        self.program.name
                    ));
                }
                Takes::Optional(kind) => {
                    notes.note(word, || format!("option {}", shown()));
                    if !rest.is_empty() {
                        return self.value(word, rest, kind);
                    }
                    return Ok(());
                }
                Takes::Value(kind) => {
                    notes.note(word, || format!("option {}", shown()));
                    if !rest.is_empty() {
                        return self.value(word, rest, kind);
                    }
                    let value = self.take_value(word)?;
                    notes.note(value, || format!("the value of {}", shown()));
                    return self.value(value, value, kind);
                }
            }
        }
        Ok(())
    }

    fn take_value(&mut self, word: &str) -> Result<&'w str, String> {
        let value = *self
            .words
            .get(self.at)
            .ok_or_else(|| format!("`{word}` needs a value and none follows"))?;
        self.at += 1;
        Ok(value)
    }

    /// An option's value or an operand, of `kind`.
    fn value(&mut self, word: &str, value: &'w str, kind: Kind) -> Result<(), String> {
        self.roles.push((value, kind, self.in_operands));
        match kind {
            Kind::Text | Kind::Pattern => Ok(()),
            Kind::Path => {
                self.paths.push(value);
                Ok(())
            }
            Kind::Meta => {
                self.metas.push(value);
                Ok(())
            }
            Kind::Choice(choices) if choices.contains(&value) => Ok(()),
            Kind::Choice(choices) => Err(format!(
                "`{word}`: {value:?} is not one of {}",
                choices.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>().join(", ")
            )),
            Kind::Prefixed(prefix) if value.starts_with(prefix) => Ok(()),
            Kind::Prefixed(prefix) => Err(format!("`{word}` does not start with {prefix:?}")),
            Kind::TextBut(refused, why) if refused.contains(&value) => Err(format!("`{value}` {why}")),
            Kind::TextBut(..) => Ok(()),
            Kind::Checked(check) => (check.check)(value).map_err(|why| format!("`{value}` as {}: {why}", check.name)),
            Kind::Filter(filter) => {
                self.filters.push((filter, value));
                Ok(())
            }
        }
    }

    /// `find`'s syntax: options (`-L`), starting points, then whole-word
    /// primaries.
    fn words_syntax(&mut self, notes: &mut Notes) -> Result<(), String> {
        let words = self.words;
        while words.get(self.at).is_some_and(|w| w.starts_with('-')) {
            self.primary(notes)?;
        }
        while let Some(&word) = words.get(self.at) {
            if word.starts_with('-') || matches!(word, "(" | ")" | "!" | ",") {
                break;
            }
            self.operands.push(word);
            self.at += 1;
        }
        while self.at < words.len() {
            self.primary(notes)?;
        }
        Ok(())
    }

    fn primary(&mut self, notes: &mut Notes) -> Result<(), String> {
        let word = self.words[self.at];
        {
            self.at += 1;
            let Some(opt) = self.program.options.iter().find(|o| o.long == word) else {
                return Err(format!(
                    "`{word}` is not an expression `{}` knows{}",
                    self.program.name,
                    if word.starts_with('-') {
                        ""
                    } else {
                        " (starting points come first)"
                    }
                ));
            };
            self.allowed(word, opt)?;
            notes.note(word, || format!("{} {}", self.program.name, opt.long));
            if let Takes::Value(kind) = opt.takes {
                let value = self.take_value(word)?;
                notes.note(value, || format!("the value of {}", opt.long));
                self.value(value, value, kind)?;
            }
        }
        Ok(())
    }

    /// The operands by kind, and what the program must be given.
    fn finish(mut self, notes: &mut Notes) -> Result<Parsed<'w>, String> {
        let program = self.program;
        if !program.requires.is_empty()
            && !self.given.iter().any(|o| {
                program
                    .requires
                    .iter()
                    .any(|r| *r == o.long || o.short.is_some_and(|s| r.len() == 1 && r.starts_with(s)))
            })
        {
            return Err(format!(
                "`{}` is covered only with one of {}",
                program.name,
                program
                    .requires
                    .iter()
                    .map(|r| format!("-{r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let mut leading = program.operands.leading;
        if self.effects.gives_pattern
            && leading
                .first()
                .is_some_and(|k| matches!(k, Kind::Pattern | Kind::Checked(_)))
        {
            leading = &leading[1..];
        }
        let operands = std::mem::take(&mut self.operands);
        self.in_operands = true;
        for (k, operand) in operands.into_iter().enumerate() {
            let kind = if self.effects.operands_are_patterns {
                Kind::Pattern
            } else {
                match leading.get(k).copied().or(program.operands.rest) {
                    Some(kind) => kind,
                    None => {
                        return Err(format!(
                            "`{operand}` is one operand more than `{}` reads here ({} at most): a further operand may be a file it writes",
                            program.name,
                            leading.len()
                        ));
                    }
                }
            };
            notes.note(operand, || match kind {
                Kind::Path => "an input path".into(),
                Kind::Meta => "a path whose metadata only is read".into(),
                Kind::Pattern => "a pattern".into(),
                Kind::Checked(check) => format!("a {} read whole", check.name),
                _ => "text".into(),
            });
            self.value(operand, operand, kind)?;
            if kind == Kind::Path {
                self.starts.push(operand);
            }
        }
        Ok(Parsed {
            program,
            paths: self.paths,
            metas: self.metas,
            starts: self.starts,
            filters: self.filters,
            roles: self.roles,
            effects: self.effects,
        })
    }
}
