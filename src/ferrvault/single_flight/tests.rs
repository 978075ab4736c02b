use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::ferrvault::reveal::SecretValue;

fn names(list: &[&str]) -> KeySelector {
    KeySelector::from_names(list.iter().copied())
}

/// A caller revealing `want` from "vault" in a task of its own, through [`fake_fetch`].
fn spawn_reveal(
    flights: &Arc<SingleFlight<&'static str>>,
    calls: &Arc<AtomicUsize>,
    want: KeySelector,
    deadline: Instant,
    fetch_takes: Duration,
) -> tokio::task::JoinHandle<Result<Revealed, FerrVaultError>> {
    let (flights, calls) = (flights.clone(), calls.clone());
    tokio::spawn(async move {
        flights
            .reveal(
                "vault",
                (None, None),
                want,
                deadline,
                fake_fetch(calls, fetch_takes),
            )
            .await
    })
}

type FakeRequest = std::pin::Pin<Box<dyn Future<Output = Result<Revealed, FerrVaultError>> + Send>>;

/// A fetch that answers every key except those starting with `missing`, after `delay`.
fn fake_fetch(
    calls: Arc<AtomicUsize>,
    delay: Duration,
) -> impl FnOnce(FlightHandle<&'static str>) -> FakeRequest {
    move |handle| {
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(fake_answer(&handle.freeze()))
        })
    }
}

/// What [`fake_fetch`] answers to `keys`: `v-<key>` for each of "a" to "d", the rest missing.
fn fake_answer(keys: &KeySelector) -> Revealed {
    let all = ["a", "b", "c", "d"];
    let mut revealed = Revealed::default();
    for key in all {
        if keys.covers(&names(&[key])) {
            revealed
                .secrets
                .insert(key.to_owned(), SecretValue::test(&format!("v-{key}")));
        }
    }
    if let KeySelector::Names(wanted) = keys {
        revealed.missing = wanted
            .iter()
            .filter(|k| !all.contains(&k.as_str()))
            .cloned()
            .collect();
    }
    revealed
}

#[tokio::test(start_paused = true)]
async fn concurrent_reveals_should_share_one_request_and_get_their_own_keys() {
    let flights = Arc::new(SingleFlight::new(
        Duration::from_millis(20),
        WAVE_HORIZON,
        KEPT_ANSWER_BYTES,
    ));
    let calls = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    let selectors = [
        names(&["a"]),
        names(&["b", "zz"]),
        KeySelector::All,
        names(&["c", "a"]),
    ];
    let mut handles = Vec::new();
    for want in selectors.clone() {
        handles.push(spawn_reveal(
            &flights,
            &calls,
            want,
            deadline,
            Duration::from_millis(50),
        ));
    }
    let results: Vec<_> = futures::future::join_all(handles)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let keys = |r: &Revealed| r.secrets.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&results[0]), ["a"]);
    assert_eq!(
        (keys(&results[1]), results[1].missing.names().to_vec()),
        (vec!["b".to_owned()], vec!["zz".to_owned()])
    );
    assert_eq!(keys(&results[2]), ["a", "b", "c", "d"]);
    assert_eq!(keys(&results[3]), ["a", "c"]);
    assert_eq!(
        flights.in_progress(),
        0,
        "nothing stays in the table after the request"
    );
}

#[tokio::test(start_paused = true)]
async fn a_caller_wanting_more_than_the_frozen_request_should_start_a_new_flight() {
    let flights = Arc::new(SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES));
    let calls = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    let first = spawn_reveal(&flights, &calls, names(&["a"]), deadline, Duration::ZERO);
    tokio::time::sleep(Duration::from_millis(1)).await;
    let covered = flights.reveal(
        "vault",
        (None, None),
        names(&["b"]),
        deadline,
        fake_fetch(calls.clone(), Duration::ZERO),
    );
    let result = covered.await.unwrap();
    assert_eq!(result.secrets.keys().collect::<Vec<_>>(), ["b"]);
    assert!(first.await.unwrap().is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn an_impatient_caller_should_time_out_alone_and_the_last_one_leaving_should_cancel() {
    let flights = Arc::new(SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES));
    let calls = Arc::new(AtomicUsize::new(0));
    let now = Instant::now();
    let patient = spawn_reveal(
        &flights,
        &calls,
        names(&["a"]),
        now + Duration::from_secs(10),
        Duration::from_secs(2),
    );
    tokio::task::yield_now().await;
    let impatient = flights
        .reveal(
            "vault",
            (None, None),
            names(&["a"]),
            now + Duration::from_secs(1),
            fake_fetch(calls.clone(), Duration::ZERO),
        )
        .await;
    assert_eq!(impatient.unwrap_err().reason(), "BudgetDeadline");
    assert!(
        patient.await.unwrap().is_ok(),
        "the other caller still gets its answer"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let abandoned = spawn_reveal(
        &flights,
        &calls,
        names(&["a"]),
        now + Duration::from_secs(60),
        Duration::from_secs(30),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    abandoned.abort();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the abandoned request was cancelled"
    );
    assert_eq!(flights.in_progress(), 0);
}

/// Caller `caller` revealing `want` from "vault" and waiting for the answer.
async fn reveal_as(
    flights: &SingleFlight<&'static str>,
    calls: &Arc<AtomicUsize>,
    caller: Option<&str>,
    want: KeySelector,
) -> Result<Revealed, FerrVaultError> {
    reveal_from(flights, calls, "vault", caller, want).await
}

/// Caller `caller` revealing `want` from `vault` and waiting for the answer.
async fn reveal_from(
    flights: &SingleFlight<&'static str>,
    calls: &Arc<AtomicUsize>,
    vault: &'static str,
    caller: Option<&str>,
    want: KeySelector,
) -> Result<Revealed, FerrVaultError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    flights
        .reveal(
            vault,
            (caller, None),
            want,
            deadline,
            fake_fetch(calls.clone(), Duration::from_millis(10)),
        )
        .await
}

#[tokio::test(start_paused = true)]
async fn a_wave_should_cost_one_request_and_each_caller_be_served_once() {
    let flights = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES);
    let calls = Arc::new(AtomicUsize::new(0));
    let first = reveal_as(&flights, &calls, Some("cr-0"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(first.secrets.len(), 4);
    for i in 1..29 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let want = if i % 2 == 0 {
            names(&["a", "zz"])
        } else {
            KeySelector::All
        };
        let mine = reveal_as(&flights, &calls, Some(&format!("cr-{i}")), want.clone())
            .await
            .unwrap();
        assert_eq!(mine, first.slice_for(&want), "caller {i} gets its own slice");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one request for the wave of 29");

    reveal_as(&flights, &calls, Some("cr-3"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "a caller's own next pass reads FerrVault again"
    );
    reveal_as(&flights, &calls, Some("cr-4"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the newer answer serves the others"
    );
}

#[tokio::test(start_paused = true)]
async fn a_kept_answer_should_be_dropped_when_its_wave_is_over_and_never_kept_for_anonymous_callers_or_failures()
 {
    let flights = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES);
    let calls = Arc::new(AtomicUsize::new(0));
    reveal_as(&flights, &calls, Some("cr-0"), names(&["a"]))
        .await
        .unwrap();
    assert_eq!(flights.answers_kept(), 1);
    assert_eq!(flights.in_progress(), 0, "no flight left");
    reveal_as(&flights, &calls, Some("cr-1"), names(&["b"]))
        .await
        .unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "keys it does not cover: a request"
    );
    tokio::time::sleep(WAVE_HORIZON.idle + Duration::from_millis(20)).await;
    assert_eq!(
        flights.answers_kept(),
        0,
        "nobody served for the idle time: dropped"
    );
    reveal_as(&flights, &calls, Some("cr-2"), names(&["b"]))
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3, "after its wave: a request");

    let anonymous = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES);
    reveal_as(&anonymous, &calls, None, names(&["a"])).await.unwrap();
    assert_eq!(
        anonymous.answers_kept(),
        0,
        "nothing outlives an anonymous request"
    );
    reveal_as(&anonymous, &calls, Some("cr-0"), names(&["a"]))
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 5);

    let failing = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES);
    let failed = failing
        .reveal(
            "vault",
            (Some("cr-0"), None),
            names(&["a"]),
            Instant::now() + Duration::from_secs(5),
            |_| async { Err(FerrVaultError::Decode("broken".into())) },
        )
        .await;
    assert!(failed.is_err());
    assert_eq!(failing.answers_kept(), 0, "a failure is never kept");
}

#[tokio::test(start_paused = true)]
async fn a_busy_wave_should_keep_its_answer_no_longer_than_the_cap() {
    let flights = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES);
    let calls = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    reveal_as(&flights, &calls, Some("cr-0"), KeySelector::All)
        .await
        .unwrap();
    for i in 1..10 {
        tokio::time::sleep(Duration::from_millis(950)).await;
        reveal_as(&flights, &calls, Some(&format!("cr-{i}")), KeySelector::All)
            .await
            .unwrap();
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "callers a second apart: one wave"
    );
    tokio::time::sleep_until(started + WAVE_HORIZON.cap + Duration::from_millis(20)).await;
    assert_eq!(flights.answers_kept(), 0, "dropped at the cap, busy or not");
    reveal_as(&flights, &calls, Some("cr-late"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// What one kept answer to `KeySelector::All` from [`fake_fetch`] costs.
fn whole_answer_cost() -> usize {
    super::budget::cost(&fake_answer(&KeySelector::All), &KeySelector::All)
}

#[tokio::test(start_paused = true)]
async fn an_answer_over_what_is_left_of_the_budget_should_not_be_kept_and_its_wave_should_ask_again() {
    let flights = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, whole_answer_cost() + 1);
    let calls = Arc::new(AtomicUsize::new(0));
    reveal_from(&flights, &calls, "vault-1", Some("cr-0"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        (flights.answers_kept(), flights.bytes_left()),
        (1, 1),
        "within the budget: kept, and charged"
    );
    let second = reveal_from(&flights, &calls, "vault-2", Some("cr-0"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        second,
        fake_answer(&KeySelector::All),
        "its caller gets it all the same"
    );
    assert_eq!(
        (flights.answers_kept(), flights.bytes_left()),
        (1, 1),
        "over what is left: not kept"
    );

    reveal_from(&flights, &calls, "vault-2", Some("cr-1"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "the unkept answer's wave asks again"
    );
    reveal_from(&flights, &calls, "vault-1", Some("cr-1"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "the kept one still serves its wave"
    );
}

#[tokio::test(start_paused = true)]
async fn the_budget_should_return_when_a_wave_ends_or_its_answer_is_replaced() {
    let budget = 2 * whole_answer_cost();
    let flights = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, budget);
    let calls = Arc::new(AtomicUsize::new(0));
    for vault in ["vault-1", "vault-2"] {
        reveal_from(&flights, &calls, vault, Some("cr-0"), KeySelector::All)
            .await
            .unwrap();
    }
    assert_eq!(
        (flights.answers_kept(), flights.bytes_left()),
        (2, 0),
        "the budget is full"
    );
    tokio::time::sleep(WAVE_HORIZON.idle + Duration::from_millis(20)).await;
    assert_eq!(
        (flights.answers_kept(), flights.bytes_left()),
        (0, budget),
        "waves over: every byte returned"
    );

    reveal_from(&flights, &calls, "vault-3", Some("cr-0"), KeySelector::All)
        .await
        .unwrap();
    for round in 0..3 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        reveal_from(&flights, &calls, "vault-3", Some("cr-0"), KeySelector::All)
            .await
            .unwrap();
        assert_eq!(
            (flights.answers_kept(), flights.bytes_left()),
            (1, budget - whole_answer_cost()),
            "round {round}: the replaced answer returned its bytes at once"
        );
    }
    reveal_from(&flights, &calls, "vault-4", Some("cr-0"), KeySelector::All)
        .await
        .unwrap();
    assert_eq!(
        (flights.answers_kept(), flights.bytes_left()),
        (2, 0),
        "what was returned keeps another vault's answer"
    );
}

#[tokio::test(start_paused = true)]
async fn a_caller_wanting_a_read_since_an_instant_should_skip_older_answers_and_share_newer_ones() {
    let flights = SingleFlight::new(Duration::ZERO, WAVE_HORIZON, KEPT_ANSWER_BYTES);
    let calls = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    let read = |caller: &'static str, since: Option<Instant>| {
        flights.reveal(
            "vault",
            (Some(caller), since),
            names(&["a"]),
            deadline,
            fake_fetch(calls.clone(), Duration::ZERO),
        )
    };
    read("before", None).await.expect("read");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let hinted = Instant::now();
    read("first-hinted", Some(hinted)).await.expect("read");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the answer kept from before is not taken"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    read("second-hinted", Some(hinted)).await.expect("read");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the answer read since is shared with the wave"
    );
    read("third", Some(Instant::now())).await.expect("read");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}
