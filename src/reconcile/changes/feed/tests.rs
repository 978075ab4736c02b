//! The feed's decisions, without a runtime: plans, recorded answers, standings.

use super::*;

fn id() -> ConnectionId {
    ("ns".to_owned(), "fv".to_owned())
}

fn spec(seconds: u64, generation: i64) -> PollSpec {
    PollSpec {
        interval: Duration::from_secs(seconds),
        generation: Some(generation),
    }
}

fn listed(pairs: &[(&str, u64)]) -> Listed {
    pairs
        .iter()
        .map(|(name, version)| {
            let entry = ListedSecret {
                version: *version,
                updated_at: Timestamp::UNIX_EPOCH,
            };
            ((*name).to_owned(), entry)
        })
        .collect()
}

fn feed() -> Arc<ChangeFeed> {
    ChangeFeed::register(&mut Registry::default())
}

/// A task that never ends, to stand for a poller.
fn task() -> AbortHandle {
    tokio::spawn(std::future::pending::<()>()).abort_handle()
}

#[tokio::test]
async fn plan_should_start_once_keep_the_same_spec_and_restart_on_a_new_one() {
    let feed = feed();
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Start);
    let first = task();
    feed.started(id(), spec(30, 1), first.clone());
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Keep);
    assert_eq!(feed.plan(&id(), Some(spec(10, 1)), false), Plan::Start);
    tokio::task::yield_now().await;
    assert!(
        first.is_finished(),
        "the old poller must be aborted before a new one starts"
    );
    feed.started(id(), spec(10, 1), task());
    assert_eq!(feed.plan(&id(), None, false), Plan::Off);
    assert_eq!(feed.standing(&id()), Standing::Off);
}

#[tokio::test]
async fn an_unsupported_connection_should_not_be_asked_again_until_its_spec_changes() {
    let feed = feed();
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Start);
    feed.started(id(), spec(30, 1), task());
    feed.record_unsupported(&id());
    assert_eq!(feed.standing(&id()), Standing::Unsupported);
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Keep);
    assert_eq!(feed.plan(&id(), Some(spec(30, 2)), false), Plan::Start);
    // After a restart, the status alone says so.
    let restarted = self::feed();
    assert_eq!(restarted.plan(&id(), Some(spec(30, 2)), true), Plan::Keep);
    assert_eq!(restarted.standing(&id()), Standing::Unsupported);
}

#[tokio::test]
async fn record_should_name_moved_new_and_gone_names_and_nothing_when_unchanged() {
    let feed = feed();
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Start);
    feed.started(id(), spec(30, 1), task());
    assert_eq!(feed.standing(&id()), Standing::Waiting);
    let first = feed.record(&id(), listed(&[("A", 1), ("B", 1)]));
    assert_eq!(first, Some(vec!["A".to_owned(), "B".to_owned()]));
    assert_eq!(feed.standing(&id()), Standing::Following);
    assert_eq!(feed.record(&id(), listed(&[("A", 1), ("B", 1)])), None);
    let mut changed = feed
        .record(&id(), listed(&[("A", 2), ("C", 1)]))
        .expect("a change");
    changed.sort();
    assert_eq!(changed, vec!["A", "B", "C"]);
}

#[tokio::test]
async fn an_answer_over_the_bounds_should_be_shown_once_and_cleared_by_the_next_good_one() {
    let feed = feed();
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Start);
    feed.started(id(), spec(30, 1), task());
    feed.record(&id(), listed(&[("A", 1)]));
    assert!(
        feed.record_too_large(&id()),
        "new: the connection's condition must say so"
    );
    assert!(!feed.record_too_large(&id()), "already shown");
    assert_eq!(feed.standing(&id()), Standing::TooLarge);
    assert!(feed.listed(&id()).is_some(), "the versions before it stay");
    assert_eq!(feed.record(&id(), listed(&[("A", 1)])), None);
    assert_eq!(feed.standing(&id()), Standing::Following);
}

#[tokio::test]
async fn detach_should_abort_every_poller_and_drop_the_sink() {
    let feed = feed();
    assert_eq!(feed.plan(&id(), Some(spec(30, 1)), false), Plan::Start);
    let running = task();
    feed.started(id(), spec(30, 1), running.clone());
    feed.detach();
    tokio::task::yield_now().await;
    assert!(running.is_finished());
    assert_eq!(feed.standing(&id()), Standing::Off);
}

/// A sink recording what it is given.
#[derive(Default)]
struct Recorded(Mutex<Vec<ObjectKey>>);

impl KeySink for Recorded {
    fn enqueue(&self, key: ObjectKey, _cause: Cause) {
        self.0.lock().expect("recorded").push(key);
    }
}

#[test]
fn a_connection_seen_before_the_feed_attached_should_be_queued_when_it_attaches() {
    let feed = feed();
    let own = ObjectKey::namespaced("ferrvaultconnection", "ns", "fv");
    assert!(!feed.leads_or_waits(&own), "detached: no poller yet");
    assert!(!feed.leads_or_waits(&own), "remembered once");
    let sink = Arc::new(Recorded::default());
    feed.attach(sink.clone());
    assert_eq!(*sink.0.lock().expect("recorded"), vec![own.clone()]);
    assert!(feed.leads_or_waits(&own), "attached: the poller may start");
    feed.detach();
    feed.attach(sink.clone());
    assert_eq!(sink.0.lock().expect("recorded").len(), 1, "queued once");
}
