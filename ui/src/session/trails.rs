//! A finished batch's decision trails as the screen keeps them: calls
//! decided the same way share one trail, and each keeps only its own body
//! time.
//!
//! A flood is mostly calls decided by one rule, so a batch of 2,000 calls
//! has a handful of distinct trails, not 2,000. Keeping one vector per call
//! cost the console a vector and a heap block a call and, worse, cost the
//! engine: the vectors it allocated for the decision log were kept by the
//! screen for the whole history instead of going back to the engine's
//! allocator when the batch ended, so every batch ran on fresh, cold memory
//! (in the console bench, the same console handed empty trails measured
//! 0.90–1.01× of headless where it measured 0.81–0.94× with them). The
//! front door builds this once per batch and drops the per-call vectors
//! where they were made.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use crate::session::provenance::TrailEntry;

/// How many of the most recently used distinct trails a call's trail is
/// compared with before it gets one of its own. A flood's few ways of
/// deciding stay among them; a batch whose calls all differ (each rejected
/// with its own reason) costs this many comparisons a call, not one per
/// earlier call.
const RECENT: usize = 8;

/// One call: which distinct trail, and where its body's time goes in it.
#[derive(Clone, Copy, Debug)]
struct CallTrail {
    shape: u32,
    /// The `Body` entry taken out of the shared trail: its position and
    /// how long the body ran.
    body: Option<(u8, Duration)>,
}

/// The decision trails of a batch's calls, in declared order.
#[derive(Clone, Debug, Default)]
pub struct BatchTrails {
    /// The distinct trails, without their `Body` entries.
    shapes: Vec<Arc<[TrailEntry]>>,
    calls: Vec<CallTrail>,
}

impl BatchTrails {
    /// How many calls it holds a trail for.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Call `index`'s trail, as it was recorded (`None` past the last).
    pub fn get(&self, index: usize) -> Option<Cow<'_, [TrailEntry]>> {
        let call = self.calls.get(index)?;
        let shape = self.shapes.get(call.shape as usize)?;
        Some(match call.body {
            None => Cow::Borrowed(&shape[..]),
            Some((at, elapsed)) => {
                let mut trail = shape.to_vec();
                trail.insert(usize::from(at).min(trail.len()), TrailEntry::Body { elapsed });
                Cow::Owned(trail)
            }
        })
    }

    /// How many distinct trails the calls share.
    pub fn distinct(&self) -> usize {
        self.shapes.len()
    }

    /// Roughly the bytes it holds.
    pub fn weight(&self) -> usize {
        let entries: usize = self
            .shapes
            .iter()
            .map(|s| 32 + s.len() * (std::mem::size_of::<TrailEntry>() + 16))
            .sum();
        std::mem::size_of::<Self>() + entries + self.calls.len() * std::mem::size_of::<CallTrail>()
    }

    /// Adds the next call's trail; `recent` holds the most recently used
    /// shapes, most recent first.
    fn push(&mut self, mut trail: Vec<TrailEntry>, recent: &mut Vec<usize>) {
        let mut bodies = trail
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, TrailEntry::Body { .. }));
        let body = match (bodies.next(), bodies.next()) {
            // One body time, at a position a byte holds: taken out, so the
            // rest can be shared.
            (Some((at, &TrailEntry::Body { elapsed })), None) => u8::try_from(at).ok().map(|at| (at, elapsed)),
            _ => None,
        };
        if let Some((at, _)) = body {
            trail.remove(usize::from(at));
        }
        let found = recent.iter().position(|&i| self.shapes[i][..] == trail[..]);
        let shape = match found {
            Some(at) => {
                let shape = recent.remove(at);
                recent.insert(0, shape);
                shape
            }
            None => {
                self.shapes.push(trail.into());
                recent.insert(0, self.shapes.len() - 1);
                recent.truncate(RECENT);
                self.shapes.len() - 1
            }
        };
        self.calls.push(CallTrail {
            // More distinct trails than a u32 counts would need more calls
            // than a batch can hold in memory.
            shape: u32::try_from(shape).unwrap_or(u32::MAX),
            body,
        });
    }
}

impl FromIterator<Vec<TrailEntry>> for BatchTrails {
    fn from_iter<I: IntoIterator<Item = Vec<TrailEntry>>>(trails: I) -> Self {
        let trails = trails.into_iter();
        let mut batch = Self {
            shapes: Vec::new(),
            calls: Vec::with_capacity(trails.size_hint().0),
        };
        let mut recent = Vec::with_capacity(RECENT + 1);
        for trail in trails {
            batch.push(trail, &mut recent);
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str) -> TrailEntry {
        TrailEntry::PreRule {
            id: id.into(),
            action: "allow",
        }
    }

    fn body(ms: u64) -> TrailEntry {
        TrailEntry::Body {
            elapsed: Duration::from_millis(ms),
        }
    }

    fn post(id: &str) -> TrailEntry {
        TrailEntry::PostRule {
            id: id.into(),
            action: "accept",
        }
    }

    #[test]
    fn every_call_gets_back_its_own_trail_in_order_and_calls_decided_alike_share_one() {
        let trails: Vec<Vec<TrailEntry>> = (0..1_000)
            .map(|i| match i % 4 {
                0 => vec![rule("reads"), body(i), post("redact")],
                1 => vec![rule("reads"), body(i)],
                2 => vec![
                    rule("writes"),
                    TrailEntry::Human {
                        approved: false,
                        reason: Some(format!("no {i}")),
                        by: "main".into(),
                        waited: std::time::Duration::ZERO,
                    },
                ],
                // Two body entries (none splits) and none at all.
                _ if i % 8 == 3 => vec![body(1), body(2)],
                _ => Vec::new(),
            })
            .collect();
        let kept: BatchTrails = trails.clone().into_iter().collect();
        assert_eq!(kept.len(), trails.len());
        for (i, trail) in trails.iter().enumerate() {
            assert_eq!(kept.get(i).as_deref(), Some(&trail[..]), "call {i}");
        }
        assert_eq!(kept.get(trails.len()), None);
        // Each rejection keeps its own reason; everything else is 4 trails.
        assert_eq!(kept.distinct(), 250 + 4);
    }

    #[test]
    fn a_trail_not_used_lately_is_kept_again_rather_than_searched_for() {
        // Each of 20 distinct trails comes back after 19 others: further
        // back than the recent ones compared, so it gets a copy, and the
        // trails still come back exactly.
        let trails: Vec<Vec<TrailEntry>> = (0..100).map(|i| vec![rule(&format!("r{}", i % 20))]).collect();
        let kept: BatchTrails = trails.clone().into_iter().collect();
        assert_eq!(kept.distinct(), 100);
        for (i, trail) in trails.iter().enumerate() {
            assert_eq!(kept.get(i).as_deref(), Some(&trail[..]));
        }
        // Alike and together: one.
        let alike: BatchTrails = (0..100).map(|_| vec![rule("r")]).collect();
        assert_eq!(alike.distinct(), 1);
    }
}
