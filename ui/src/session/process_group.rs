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
    /// Starts `command` leading a process group of its own, killed (with
    /// the child) when the returned group is dropped.
    ///
    /// # Errors
    /// When the command cannot start.
    pub fn spawn(command: &mut tokio::process::Command) -> std::io::Result<(tokio::process::Child, Self)> {
        let child = command.process_group(0).kill_on_drop(true).spawn()?;
        let group = Self(child.id().and_then(|id| Pid::from_raw(i32::try_from(id).ok()?)));
        Ok((child, group))
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
