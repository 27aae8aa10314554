//! Shared by the benchmarks: medians and a one-line ratio report.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// The median of `samples` runs of `f`, each timed as a whole.
pub fn median(samples: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..samples).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2]
}

/// Times `iterations` calls of `f` and returns the mean per call.
pub fn per_call(iterations: u32, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    start.elapsed() / iterations
}

/// Prints one summary line that the README and closing notes quote.
pub fn report(name: &str, measured: Duration, baseline_name: &str, baseline: Duration, goal: &str) {
    let ratio = measured.as_secs_f64() / baseline.as_secs_f64();
    println!("SUMMARY {name}: median {measured:.3?} vs {baseline_name} {baseline:.3?} = {ratio:.3}x (goal: {goal})");
}
