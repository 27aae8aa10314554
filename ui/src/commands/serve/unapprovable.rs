//! A two-person rule nobody can ever satisfy as serve is started: said at
//! start, not found out when its first call times out.

use crate::cli::ServeArgs;
use crate::files::policy::{Action, Policy};

/// The policy's asks that need more than one approval: (rule id, how many).
fn several(policy: &Policy) -> Vec<(&str, u8)> {
    policy
        .rules
        .iter()
        .filter_map(|rule| match &rule.action {
            Action::Ask { approvals: Some(n), .. } if n.get() > 1 => Some((&*rule.id, n.get())),
            _ => None,
        })
        .collect()
}

/// One line for each rule whose calls can never be approved the way serve
/// answers: headless with a scripted `--answer` (one answerer at most), or
/// a console with neither `--attach` nor `--web` (the only answerer).
pub(super) fn warnings(policy: &Policy, args: &ServeArgs) -> Vec<String> {
    let scripted = args.headless && args.answer.scripted().is_some();
    let alone = !args.headless && !args.attach && args.web.web.is_none();
    if !scripted && !alone {
        return Vec::new();
    }
    several(policy)
        .into_iter()
        .map(|(id, n)| {
            let id = crate::sanitize::escape(id);
            if scripted {
                format!(
                    "rule {id} needs {n} approvals from distinct answerers and a scripted --answer counts as one at most: its calls are never approved; serve with --answer attached and --attach or --web"
                )
            } else {
                format!(
                    "rule {id} needs {n} approvals but only this console answers: add --attach or --web, or its calls are never approved"
                )
            }
        })
        .collect()
}
