use super::*;

#[test]
fn a_human_answer_names_the_console_that_gave_it_as_the_journal_does() {
    let human = |approved, reason: Option<&str>, by: &str| TrailEntry::Human {
        approved,
        reason: reason.map(str::to_owned),
        by: by.into(),
        waited: Duration::ZERO,
    };
    assert_eq!(
        human(true, None, "attach 2 (pts/4)").describe(),
        "human@attach 2 (pts/4): approved"
    );
    assert_eq!(
        human(false, Some("not now"), "main").describe(),
        "human@main: rejected (not now)"
    );
    assert_eq!(human(true, None, SCRIPTED).describe(), "script: approved");
}

/// Keys of distinct executions, the same for the same `i`.
fn key(i: usize) -> CallKey {
    thread_local! {
        static IDS: std::cell::RefCell<Vec<ExecutionId>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    IDS.with(|ids| {
        let mut ids = ids.borrow_mut();
        while ids.len() <= i {
            ids.push(ExecutionId::fresh());
        }
        CallKey(ids[i])
    })
}

fn veto(i: usize) -> TrailEntry {
    TrailEntry::GuardWillVeto {
        id: Arc::from("g"),
        reason: format!("r{i}"),
    }
}

/// The items the recency order holds (the LRU's own list: one per
/// call with a trail, nothing stale).
fn order_len(log: &DecisionLog) -> usize {
    log.lock().by_call.len()
}

#[test]
fn a_million_calls_never_taken_keep_the_log_bounded_and_recent_calls_answer() {
    let limit = 1_000;
    let log = DecisionLog::with_limit(limit);
    let mut most_order = 0;
    for i in 0..1_000_000 {
        log.record_for(key(i), veto(i));
        if i % 3 == 0 {
            // Some calls get a second entry, and some are taken, as
            // finished calls are.
            log.record_for(key(i), TrailEntry::NoAnswerer);
        }
        if i % 5 == 0 {
            log.take(&key(i));
        }
        most_order = most_order.max(order_len(&log));
        assert!(log.len() <= limit);
    }
    assert_eq!(log.len(), limit);
    assert!(most_order <= 2 * limit + 1, "the order queue grew to {most_order}");
    // The most recent calls still answer; the oldest were dropped.
    assert_eq!(log.guard_will_veto(&key(999_999)), Some("guard g: r999999".to_owned()));
    assert_eq!(log.take(&key(999_998)), vec![veto(999_998)]);
    assert_eq!(
        log.take(&key(999_997)),
        vec![veto(999_997)],
        "neither taken nor dropped"
    );
    assert_eq!(log.guard_will_veto(&key(0)), None);
    assert_eq!(log.guard_will_veto(&key(1)), None);
    assert!(log.dropped() > 700_000, "{}", log.dropped());
}

#[test]
fn a_call_recorded_again_moves_to_the_back_and_outlives_older_ones() {
    let log = DecisionLog::with_limit(3);
    log.record_for(key(1), veto(1)); // a call waiting for a human
    log.record_for(key(2), veto(2));
    log.record_for(key(3), veto(3));
    log.record_for(key(1), TrailEntry::NoAnswerer); // answered: touched
    log.record_for(key(4), veto(4)); // over the limit: 2 goes, not 1
    assert_eq!(log.guard_will_veto(&key(2)), None);
    assert_eq!(log.take(&key(1)), vec![veto(1), TrailEntry::NoAnswerer]);
    assert_eq!(log.len(), 2);
    assert_eq!(log.dropped(), 1);
}

#[test]
fn the_default_limit_holds_over_a_million_calls() {
    let log = DecisionLog::default();
    for i in 0..1_000_000 {
        log.record_for(key(i), TrailEntry::NoAnswerer);
    }
    assert_eq!(log.len(), TRAIL_LIMIT);
    assert!(order_len(&log) <= 2 * TRAIL_LIMIT + 1);
    assert_eq!(log.take(&key(999_999)), vec![TrailEntry::NoAnswerer]);
}
