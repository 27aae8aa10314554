//! Call ids in flight, per scope. A model's call id is how the agent tells
//! one result from another, and what the journal and the screen name a call
//! by: a batch that declares one id twice, or names an id still in flight
//! in the same scope, is refused before anything runs (docs/protocol.md),
//! so no two calls anyone could confuse run at once. (Decision trails are
//! kept per execution whatever the ids: this is about the agent's answers.)

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

/// The call ids of every batch and hook call running now, by scope id.
#[derive(Default)]
pub(crate) struct InFlight {
    ids: Mutex<HashSet<(u64, Arc<str>)>>,
}

/// The ids one batch holds; dropping it (the batch is over, cancelled or
/// its connection gone) frees them.
pub(crate) struct Claim<'a> {
    in_flight: &'a InFlight,
    keys: Vec<(u64, Arc<str>)>,
}

impl InFlight {
    /// Holds `ids` in `scope` for as long as the claim lives.
    ///
    /// # Errors
    /// Names the first id declared twice in `ids`, or already held in
    /// `scope`; nothing is held then.
    pub(crate) fn claim<'a, 'i>(
        &'a self,
        scope: u64,
        ids: impl IntoIterator<Item = &'i str>,
    ) -> Result<Claim<'a>, String> {
        let mut held = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        let mut keys: Vec<(u64, Arc<str>)> = Vec::new();
        // Filled from the second id on: a batch of one call (most of them)
        // cannot repeat an id.
        let mut declared = HashSet::new();
        let mut first = None;
        for id in ids {
            let key = (scope, Arc::from(id));
            let repeated = match first {
                None => {
                    first = Some(id);
                    false
                }
                Some(first) => {
                    if declared.is_empty() {
                        declared.insert(first);
                    }
                    !declared.insert(id)
                }
            };
            let refusal = if repeated {
                Some("is declared more than once in this batch")
            } else if held.contains(&key) {
                Some("is already in flight in this session (wait for its result, or give the call an id of its own)")
            } else {
                None
            };
            if let Some(why) = refusal {
                return Err(format!("call id {id:?} {why}: nothing in the batch ran"));
            }
            keys.push(key);
        }
        held.extend(keys.iter().cloned());
        Ok(Claim { in_flight: self, keys })
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut held = self.in_flight.ids.lock().unwrap_or_else(PoisonError::into_inner);
        for key in &self.keys {
            held.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_twice_in_one_batch_or_in_flight_in_the_scope_is_refused_and_freed_after() {
        let in_flight = InFlight::default();
        assert_eq!(
            in_flight.claim(1, ["a", "x", "x"]).err().as_deref(),
            Some("call id \"x\" is declared more than once in this batch: nothing in the batch ran")
        );
        // The first id repeated later, and at once.
        for ids in [["x", "a", "x"].as_slice(), ["x", "x"].as_slice()] {
            assert_eq!(
                in_flight.claim(1, ids.iter().copied()).err().as_deref(),
                Some("call id \"x\" is declared more than once in this batch: nothing in the batch ran")
            );
        }
        let first = in_flight.claim(1, ["x", "y"]).unwrap();
        let refused = in_flight.claim(1, ["z", "y"]).err().unwrap();
        assert!(
            refused.starts_with("call id \"y\" is already in flight in this session"),
            "{refused}"
        );
        // The refused batch held nothing: z is free; another scope is apart.
        drop(in_flight.claim(1, ["z"]).unwrap());
        drop(in_flight.claim(2, ["x", "y"]).unwrap());
        drop(first);
        drop(in_flight.claim(1, ["x", "y"]).unwrap());
        assert!(in_flight.ids.lock().unwrap().is_empty());
    }
}
