use std::time::SystemTime;

use super::*;

fn fresh() -> WatchState {
    WatchState::starting("Secret")
}

fn object() -> StreamItem {
    StreamItem::Object { keys: Vec::new() }
}

#[test]
fn state_should_connect_after_the_list_and_disconnect_on_error() {
    let mut w = fresh();
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(5);
    assert!(!record(&mut w, &StreamItem::Relisting, at));
    assert!(
        !w.connected && !w.synced,
        "neither connected nor synced before the list completes"
    );
    assert!(
        record(&mut w, &StreamItem::Listed { vanished: vec![] }, at),
        "connecting is urgent"
    );
    assert!(w.connected && w.synced);
    assert!(!record(&mut w, &object(), at));
    assert!(record(
        &mut w,
        &StreamItem::Failed("watch error: 410 Expired".into()),
        at
    ));
    assert_eq!(
        (
            w.synced,
            w.connected,
            w.errors,
            w.events,
            w.last_error.as_deref(),
            w.last_event_at
        ),
        (true, false, 1, 4, Some("watch error: 410 Expired"), Some(at)),
        "an error disconnects but never unsyncs"
    );
    assert!(!record(&mut w, &object(), at));
    assert!(
        w.synced && !w.connected,
        "an event after an error resumed without a re-list keeps the watch synced"
    );
    assert!(
        record(&mut w, &StreamItem::Listed { vanished: vec![] }, at),
        "reconnecting is urgent"
    );
    assert!(
        !record(&mut w, &StreamItem::Listed { vanished: vec![] }, at),
        "already connected"
    );
}

#[test]
fn throttle_should_send_urgent_changes_at_once_and_coalesce_routine_ones() {
    let t0 = Instant::now();
    let mut t = ReportThrottle::default();
    assert_eq!(
        t.on_change(false, t0),
        ReportNow::Send,
        "the first report goes out at once"
    );
    let soon = t0 + Duration::from_millis(300);
    assert_eq!(
        t.on_change(false, soon),
        ReportNow::FlushAfter(Duration::from_millis(700))
    );
    assert_eq!(
        t.on_change(false, soon),
        ReportNow::Nothing,
        "one trailing flush carries the burst"
    );
    assert_eq!(
        t.on_change(true, soon),
        ReportNow::Send,
        "urgent changes are never held back"
    );
    t.on_flush(t0 + Duration::from_secs(1));
    assert_eq!(
        t.on_change(false, t0 + Duration::from_millis(1500)),
        ReportNow::FlushAfter(Duration::from_millis(500))
    );
    assert_eq!(t.on_change(false, t0 + Duration::from_secs(3)), ReportNow::Send);
}
