//! The chaos batch's plans: what each callback does for each call (drawn
//! from a seeded generator, so a seed reproduces a batch), and what a call
//! must end in when nothing cancels it.

/// What one callback does for one call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    Answer,
    SleepThenAnswer(u64),
    Fail,
    PanicNow,
    PanicLater,
}

impl Act {
    pub fn fails(self) -> bool {
        matches!(self, Act::Fail | Act::PanicNow | Act::PanicLater)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pre {
    Allow,
    Deny,
    Ask { approve: bool },
}

/// Everything every callback does for one call.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub parallel: bool,
    pub declared: Act,
    pub pre: Act,
    pub decision: Pre,
    pub answerer: Act,
    pub guard: Act,
    pub veto: bool,
    pub wrapper: Act,
    pub expired_token: bool,
    pub body: Act,
    pub post: Act,
    pub block: bool,
    pub result: Act,
    pub ready: Act,
}

/// splitmix64: a small seeded generator, so a seed reproduces a batch.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// An act whose sleep, if any, lasts up to `longest` ms.
    pub fn act_up_to(&mut self, longest: u64) -> Act {
        match self.below(100) {
            0..=3 => Act::Fail,
            4..=6 => Act::PanicNow,
            7..=9 => Act::PanicLater,
            10..=29 => Act::SleepThenAnswer(1 + self.below(longest)),
            _ => Act::Answer,
        }
    }

    pub fn act(&mut self) -> Act {
        self.act_up_to(5)
    }

    pub fn plan(&mut self) -> Plan {
        Plan {
            parallel: self.percent(70),
            declared: self.act(),
            pre: self.act(),
            decision: match self.below(100) {
                0..=4 => Pre::Deny,
                5..=19 => Pre::Ask {
                    approve: self.percent(80),
                },
                _ => Pre::Allow,
            },
            answerer: self.act(),
            guard: self.act(),
            veto: self.percent(5),
            wrapper: self.act(),
            expired_token: self.percent(5),
            // Bodies take longer, so a cancel often finds some running.
            body: self.act_up_to(50),
            post: self.act(),
            block: self.percent(5),
            result: self.act(),
            ready: self.act(),
        }
    }
}

/// What a run without cancellation must end in, and whether its body runs.
pub fn expected(plan: &Plan) -> (Option<&'static str>, bool) {
    let ended = |code| (Some(code), false);
    if plan.declared.fails() || plan.pre.fails() {
        return ended("TOOL_ERROR");
    }
    match plan.decision {
        Pre::Allow => {}
        Pre::Deny => return ended("DENIED"),
        Pre::Ask { .. } if plan.answerer.fails() => return ended("UNAVAILABLE"),
        Pre::Ask { approve: false } => return ended("DENIED"),
        Pre::Ask { approve: true } => {}
    }
    if plan.guard.fails() {
        return ended("TOOL_ERROR");
    }
    if plan.veto {
        return ended("DENIED");
    }
    if !plan.wrapper.fails() && plan.expired_token {
        return ended("ABORTED_BEFORE_DISPATCH");
    }
    let body_runs = !plan.wrapper.fails();
    let executed_ok = body_runs && !plan.body.fails();
    let code = if plan.post.fails() {
        Some("TOOL_ERROR")
    } else if plan.block {
        Some("BLOCKED")
    } else if executed_ok {
        None
    } else {
        Some("TOOL_ERROR")
    };
    (code, body_runs)
}
