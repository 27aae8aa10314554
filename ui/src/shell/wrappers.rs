//! The wrappers a deny or ask rule looks behind, each with its own options
//! as the real program reads them (sudo 1.9, doas, GNU coreutils' env, nice,
//! nohup, timeout, stdbuf, chroot, GNU time, findutils' xargs, util-linux's
//! setsid, procps' watch, bash's command and exec). `bash_differential.rs`
//! runs the ones it can against the real programs.

use super::options::Spec;

/// The options of the wrapper `name`, if it simply runs the command after
/// them (`command` and `watch` are read by the caller).
pub(super) fn spec(name: &str) -> Option<&'static Spec> {
    Some(match name {
        "sudo" => &SUDO,
        "doas" => &DOAS,
        "env" => &ENV,
        "nice" => &NICE,
        "nohup" | "builtin" => &Spec::NONE,
        "timeout" => &TIMEOUT,
        "stdbuf" => &STDBUF,
        "time" => &TIME,
        "exec" => &EXEC,
        "xargs" => &XARGS,
        "chroot" => &CHROOT,
        "setsid" => &SETSID,
        "unbuffer" => &UNBUFFER,
        "caffeinate" => &CAFFEINATE,
        _ => return None,
    })
}

const SUDO: Spec = Spec {
    short_values: "uUgpCDrtTR",
    short_flags: "AbBEeHiKklNnPSsVv",
    long_values: &[
        "user",
        "other-user",
        "group",
        "prompt",
        "close-from",
        "chdir",
        "role",
        "type",
        "command-timeout",
        "chroot",
        "host",
    ],
    long_flags: &[
        "askpass",
        "background",
        "bell",
        "preserve-env",
        "edit",
        "help",
        "set-home",
        "login",
        "remove-timestamp",
        "reset-timestamp",
        "list",
        "non-interactive",
        "preserve-groups",
        "stdin",
        "shell",
        "version",
        "validate",
    ],
    assignments: true,
    ..Spec::NONE
};

const DOAS: Spec = Spec {
    short_values: "uC",
    short_flags: "nsL",
    long_flags: &[],
    ..Spec::NONE
};

const ENV: Spec = Spec {
    short_values: "uCa",
    short_flags: "i0v",
    long_values: &["unset", "chdir", "argv0"],
    long_flags: &[
        "ignore-environment",
        "null",
        "debug",
        "help",
        "version",
        "list-signal-handling",
        "block-signal",
        "default-signal",
        "ignore-signal",
        "split-string",
    ],
    dash: true,
    assignments: true,
    split: Some(('S', "split-string")),
    ..Spec::NONE
};

const NICE: Spec = Spec {
    short_values: "n",
    long_values: &["adjustment"],
    numeric: true,
    ..Spec::NONE
};

const TIMEOUT: Spec = Spec {
    short_values: "ks",
    short_flags: "fvp",
    long_values: &["kill-after", "signal"],
    long_flags: &["foreground", "preserve-status", "verbose", "help", "version"],
    operands: 1,
    ..Spec::NONE
};

const STDBUF: Spec = Spec {
    short_values: "ioe",
    long_values: &["input", "output", "error"],
    ..Spec::NONE
};

/// bash's `time -p` and GNU time's options.
const TIME: Spec = Spec {
    short_values: "fo",
    short_flags: "pavq",
    long_values: &["format", "output"],
    long_flags: &["append", "verbose", "quiet", "portability", "help", "version"],
    ..Spec::NONE
};

const EXEC: Spec = Spec {
    short_values: "a",
    short_flags: "cl",
    long_flags: &[],
    ..Spec::NONE
};

const XARGS: Spec = Spec {
    short_values: "aEIdLnPs",
    short_attached: "eil",
    short_flags: "0optrx",
    long_values: &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    long_flags: &[
        "null",
        "open-tty",
        "interactive",
        "no-run-if-empty",
        "verbose",
        "exit",
        "show-limits",
        "help",
        "version",
        "eof",
        "replace",
        "max-lines",
    ],
    ..Spec::NONE
};

const CHROOT: Spec = Spec {
    long_values: &["userspec", "groups"],
    long_flags: &["skip-chdir", "help", "version"],
    operands: 1,
    ..Spec::NONE
};

const SETSID: Spec = Spec {
    short_flags: "cfwVh",
    long_flags: &["ctty", "fork", "wait", "help", "version"],
    ..Spec::NONE
};

const UNBUFFER: Spec = Spec {
    short_flags: "p",
    long_flags: &[],
    ..Spec::NONE
};

const CAFFEINATE: Spec = Spec {
    short_values: "tw",
    short_flags: "dimsu",
    long_flags: &[],
    ..Spec::NONE
};

/// bash's `command [-pVv]`.
pub(super) const COMMAND: Spec = Spec {
    short_flags: "pvV",
    long_flags: &[],
    ..Spec::NONE
};

/// procps' watch.
pub(super) const WATCH: Spec = Spec {
    short_values: "nqs",
    short_attached: "d",
    short_flags: "bcCegprtwxh",
    long_values: &["interval", "equexit", "shotsdir"],
    long_flags: &[
        "differences",
        "beep",
        "color",
        "no-color",
        "errexit",
        "chgexit",
        "precise",
        "no-rerun",
        "no-title",
        "no-wrap",
        "exec",
        "help",
        "version",
    ],
    ..Spec::NONE
};
