use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio::time::Instant;

use super::*;

const RATE: Rate = Rate {
    per_second: 2.0,
    burst: 4.0,
};

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn budget() -> WriteBudget {
    WriteBudget::new(Some(RATE), &["c"], &mut Registry::default())
}

fn throttled(budget: &WriteBudget) -> u64 {
    budget
        .throttled
        .get_or_create(&ControllerLabel { controller: "c" })
        .get()
}

#[test]
fn a_pass_should_be_admitted_while_its_namespace_has_budget_and_given_slots_after() {
    let budget = budget();
    let t0 = Instant::now();
    // (ms after t0, writes charged just before, admission)
    let table = [
        (0, 0, Admission::Admitted),
        (0, 3, Admission::Admitted),
        // 4 - 4 = 0 tokens: a token in 500 ms, then slots 1.5 s (3 writes at 2/s) apart.
        (0, 1, Admission::Throttled(ms(500))),
        (0, 0, Admission::Throttled(ms(2_000))),
        (100, 0, Admission::Throttled(ms(3_400))),
        // At its slot the first one finds its token.
        (500, 0, Admission::Admitted),
    ];
    for (at, writes, admission) in table {
        for _ in 0..writes {
            budget.charge("ns", t0 + ms(at));
        }
        assert_eq!(budget.admit("ns", "c", t0 + ms(at)), admission, "at {at} ms");
    }
    assert_eq!(throttled(&budget), 3, "each held-back pass counted");
}

#[test]
fn writes_in_debt_should_delay_admission_until_repaid() {
    let budget = budget();
    let t0 = Instant::now();
    for _ in 0..10 {
        budget.charge("ns", t0);
    }
    // 4 - 10 = -6: seven tokens of refill at 2/s until one is there.
    assert_eq!(budget.admit("ns", "c", t0), Admission::Throttled(ms(3_500)));
    assert_eq!(budget.admit("ns", "c", t0 + ms(3_500)), Admission::Admitted);
}

#[test]
fn one_namespace_spending_its_budget_should_not_throttle_another() {
    let budget = budget();
    let t0 = Instant::now();
    for _ in 0..100 {
        budget.charge("attacker", t0);
    }
    assert!(matches!(
        budget.admit("attacker", "c", t0),
        Admission::Throttled(_)
    ));
    assert_eq!(budget.admit("victim", "c", t0), Admission::Admitted);
}

#[test]
fn admitted_writes_should_stay_within_burst_plus_rate_over_any_window() {
    // Passes arriving every 50 ms, each writing 3 times when admitted: over any window, the
    // writes stay within burst + rate × window + one pass's writes (the overshoot of the
    // last admitted pass).
    let budget = budget();
    let t0 = Instant::now();
    let mut writes = Vec::new();
    for at in (0..20_000).step_by(50) {
        if budget.admit("ns", "c", t0 + ms(at)) == Admission::Admitted {
            for _ in 0..3 {
                budget.charge("ns", t0 + ms(at));
                writes.push(at);
            }
        }
    }
    for (i, start) in writes.iter().enumerate() {
        for window in [0, 1_000, 5_000] {
            let within = writes[i..].iter().take_while(|at| **at <= start + window).count();
            let bound = RATE.burst + RATE.per_second * window as f64 / 1000.0 + 3.0;
            assert!(
                within as f64 <= bound,
                "{within} writes in {window} ms from {start}"
            );
        }
    }
    let rate = writes.len() as f64 / 20.0;
    assert!(rate > 1.5, "the budget is used, not starved: {rate}/s");
}

#[test]
fn an_unlimited_budget_should_admit_everything_and_keep_nothing() {
    let budget = WriteBudget::unlimited();
    let t0 = Instant::now();
    for _ in 0..1_000 {
        budget.charge("ns", t0);
    }
    assert_eq!(budget.admit("ns", "c", t0), Admission::Admitted);
    assert!(budget.namespaces.lock().unwrap().is_empty());
}

#[test]
fn idle_namespaces_should_be_forgotten_once_the_map_doubles() {
    let budget = budget();
    let t0 = Instant::now();
    let many = crate::reconcile::rules::bounds::pruned_map::MIN_PRUNE_LEN;
    for n in 0..many {
        for _ in 0..4 {
            budget.charge(&format!("old-{n}"), t0);
        }
    }
    budget.charge("busy", t0 + ms(1_000));
    let len = || budget.namespaces.lock().unwrap().len();
    assert_eq!(
        len(),
        many + 1,
        "emptied at t0, not refilled a second later: kept"
    );
    for n in 0..many {
        budget.charge(&format!("later-{n}"), t0 + ms(3_000));
    }
    assert_eq!(len(), many, "refilled by then: only the later ones are left");
}
