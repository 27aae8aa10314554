use super::*;

fn door() -> AttachDoor {
    let (events, _receiver) = AppEventSender::new();
    AttachDoor::new(
        ScreenHub::default(),
        None,
        events,
        Box::new(|_, _| screen()),
        Arc::new(|_, _| {}),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn screen() -> App {
    App::new(
        tether_tools::ToolRegistry::new(),
        vec![crate::tui::app::ScopeEntry::global()],
        crate::tui::app::HeaderInfo::default(),
        std::time::Instant::now(),
    )
}

#[tokio::test(start_paused = true)]
async fn a_code_is_used_once_every_wrong_one_draws_a_new_one_and_waits_longer_but_never_locks() {
    let door = door();
    let code = door.code().unwrap_or_default();
    assert_eq!(code.len(), 6);
    assert!(code.bytes().all(|b| b.is_ascii_digit()));
    assert_eq!(door.check(&code).await, Ok(()));
    let mut waits = Vec::new();
    for n in 0..9 {
        let before = door.code().unwrap_or_default();
        let given = if n == 0 { code.clone() } else { "nope".to_owned() };
        let started = tokio::time::Instant::now();
        let refused = door.check(&given).await;
        assert_eq!(
            refused,
            Err(Refusal::WrongCode {
                waited: started.elapsed()
            }),
            "{given}"
        );
        waits.push(started.elapsed().as_secs());
        assert_ne!(door.code(), Some(before.clone()), "a wrong code draws a new one");
        // The code it replaced is no good either (after one more wait).
        if n == 8 {
            assert!(door.check(&before).await.is_err());
        }
    }
    assert_eq!(
        waits,
        [1, 2, 4, 8, 16, 32, 60, 60, 60],
        "the first try reused a used code"
    );
    // However many wrong codes came before, the current one attaches, and
    // the delays start again from the first.
    let current = door.code().unwrap_or_default();
    assert_eq!(door.check(&current).await, Ok(()));
    let started = tokio::time::Instant::now();
    assert!(door.check("nope").await.is_err());
    assert_eq!(started.elapsed(), FIRST_DELAY);
}

#[tokio::test(start_paused = true)]
async fn tries_side_by_side_wait_one_behind_the_other() {
    let door = Arc::new(door());
    let started = tokio::time::Instant::now();
    let tries: Vec<_> = (0..3)
        .map(|_| {
            let door = Arc::clone(&door);
            tokio::spawn(async move { door.check("nope").await })
        })
        .collect();
    for t in tries {
        assert!(t.await.unwrap_or(Ok(())).is_err());
    }
    assert_eq!(started.elapsed(), Duration::from_secs(1 + 2 + 4), "not all at once");
}

#[tokio::test(start_paused = true)]
async fn wrong_codes_far_apart_are_forgotten() {
    let door = door();
    assert!(door.check("nope").await.is_err());
    assert!(door.check("nope").await.is_err());
    tokio::time::sleep(FORGET_AFTER + Duration::from_secs(1)).await;
    let started = tokio::time::Instant::now();
    assert!(door.check("nope").await.is_err());
    assert_eq!(started.elapsed(), FIRST_DELAY);
}
