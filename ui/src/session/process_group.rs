//! The commands the console starts for the user (a reviewer, a notify
//! command) run in a process group of their own, and the whole group is
//! killed when the console gives up on one (its deadline passed, the
//! review was dropped): what `sh -c` started (a pipeline, a `curl` in the
//! background) ends with it, not only `sh`. A command that ended on its
//! own keeps what it left running (a sound still playing).

use rustix::process::{Pid, Signal};

/// A started command's process group, killed when dropped.
#[derive(Debug)]
pub struct Group(Option<Pid>);

impl Group {
    /// The group `child` leads (it was started with `process_group(0)`).
    pub fn of(child: &tokio::process::Child) -> Self {
        Self(child.id().and_then(|id| Pid::from_raw(i32::try_from(id).ok()?)))
    }

    /// The command ended on its own: nothing is killed.
    pub fn ended(mut self) {
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            // Gone already (everything in it ended): nothing to do.
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
    }
}
