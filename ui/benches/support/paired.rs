//! Two ways of doing one thing, timed in interleaved pairs so both see the
//! same machine (the benches that compare with a baseline of the same run).

use std::time::Duration;

/// What `pairs` interleaved runs gave: the median of each side and the
/// per-pair ratios `first / second`, sorted.
pub struct Paired {
    pub first: Duration,
    pub second: Duration,
    ratios: Vec<f64>,
}

impl Paired {
    /// Runs `pair` `pairs` times; each run times both sides, in its order.
    pub fn run(pairs: usize, mut pair: impl FnMut() -> (Duration, Duration)) -> Self {
        let (mut firsts, mut seconds, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..pairs {
            let (first, second) = pair();
            ratios.push(first.as_secs_f64() / second.as_secs_f64());
            firsts.push(first);
            seconds.push(second);
        }
        firsts.sort();
        seconds.sort();
        ratios.sort_by(f64::total_cmp);
        Self {
            first: firsts[pairs / 2],
            second: seconds[pairs / 2],
            ratios,
        }
    }

    /// The median of the per-pair ratios.
    pub fn ratio(&self) -> f64 {
        self.ratios[self.ratios.len() / 2]
    }

    /// The first and third quartiles of the per-pair ratios.
    pub fn quartiles(&self) -> (f64, f64) {
        let n = self.ratios.len();
        (self.ratios[n / 4], self.ratios[3 * n / 4])
    }
}
