use super::*;

const ME: &str = "pod-a_1";
const OTHER: &str = "pod-b_2";

fn wall(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).expect("valid timestamp")
}

fn held_by(holder: &str, transitions: i32) -> LeaseRecord {
    LeaseRecord {
        holder: Some(holder.to_owned()),
        lease_duration: Duration::from_secs(15),
        acquire_time: Some(wall(0)),
        renew_time: Some(wall(5)),
        transitions,
    }
}

/// [`decide`] for us (`ME`) with the default timings.
fn decide_as_me(observed: Option<&Observed>, leading: bool, now: Instant, wall_now: Timestamp) -> Decision {
    decide(observed, ME, leading, now, wall_now, &Timings::DEFAULT)
}

fn observed(record: LeaseRecord, at: Instant) -> Observed {
    Observed {
        record,
        observed_at: at,
    }
}

#[test]
fn default_timings_should_be_client_go_defaults_and_valid() {
    let t = Timings::default();
    assert_eq!(t.lease_duration, Duration::from_secs(15));
    assert_eq!(t.renew_deadline, Duration::from_secs(10));
    assert_eq!(t.retry_period, Duration::from_secs(2));
    assert_eq!(t.validate(), Ok(()));
    assert_eq!(t.api_timeout(), Duration::from_secs(5));
}

#[test]
fn timings_should_refuse_client_go_violations() {
    let ok = Timings {
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(500),
    };
    assert_eq!(ok.validate(), Ok(()));
    let cases = [
        (
            Timings {
                lease_duration: Duration::from_millis(3500),
                ..ok
            },
            TimingsError::LeaseDurationNotWholeSeconds,
        ),
        (
            Timings {
                lease_duration: Duration::ZERO,
                ..ok
            },
            TimingsError::LeaseDurationNotWholeSeconds,
        ),
        (
            Timings {
                renew_deadline: Duration::from_secs(3),
                ..ok
            },
            TimingsError::LeaseNotLongerThanRenewDeadline,
        ),
        (
            Timings {
                retry_period: Duration::from_millis(1700),
                ..ok
            },
            TimingsError::RenewDeadlineTooShort,
        ),
        (
            Timings {
                retry_period: Duration::ZERO,
                ..ok
            },
            TimingsError::RetryPeriodZero,
        ),
        (
            // 2s + 1.5s > 3s: no retry period of margin between the fence and the takeover.
            Timings {
                retry_period: Duration::from_millis(1500),
                renew_deadline: Duration::from_millis(1900),
                ..ok
            },
            TimingsError::NoFencingMargin,
        ),
    ];
    for (timings, expected) in cases {
        assert_eq!(timings.validate(), Err(expected), "{timings:?}");
    }
}

#[test]
fn absent_lease_should_be_created_naming_us_with_zero_transitions() {
    let now = Instant::now();
    let d = decide_as_me(None, false, now, wall(10));
    assert_eq!(
        d,
        Decision::Create(LeaseRecord {
            holder: Some(ME.into()),
            lease_duration: Duration::from_secs(15),
            acquire_time: Some(wall(10)),
            renew_time: Some(wall(10)),
            transitions: 0,
        })
    );
}

#[test]
fn valid_lease_of_another_should_make_us_wait_until_its_local_expiry() {
    let seen = Instant::now();
    let o = observed(held_by(OTHER, 3), seen);
    let d = decide_as_me(Some(&o), false, seen + Duration::from_secs(14), wall(100));
    assert_eq!(
        d,
        Decision::Wait {
            holder: OTHER.into(),
            expires_at: seen + Duration::from_secs(15)
        }
    );
}

#[test]
fn expiry_should_be_judged_by_local_observation_not_by_renew_time() {
    // The holder's renewTime is far in the past by our wall clock (skewed clocks), but we only
    // just saw this record: it is still valid.
    let seen = Instant::now();
    let mut record = held_by(OTHER, 1);
    record.renew_time = Some(wall(-3600));
    let o = observed(record, seen);
    let d = decide_as_me(Some(&o), false, seen + Duration::from_secs(1), wall(0));
    assert!(matches!(d, Decision::Wait { .. }), "{d:?}");
}

#[test]
fn expired_lease_of_another_should_be_acquired_with_one_more_transition() {
    let seen = Instant::now();
    let o = observed(held_by(OTHER, 3), seen);
    let d = decide_as_me(Some(&o), false, seen + Duration::from_secs(15), wall(40));
    assert_eq!(
        d,
        Decision::Write {
            record: LeaseRecord {
                holder: Some(ME.into()),
                lease_duration: Duration::from_secs(15),
                acquire_time: Some(wall(40)),
                renew_time: Some(wall(40)),
                transitions: 4,
            },
            acquiring: true,
        }
    );
}

#[test]
fn released_lease_should_be_acquired_at_once() {
    let now = Instant::now();
    let o = observed(released(&held_by(OTHER, 2), wall(1)), now);
    let d = decide_as_me(Some(&o), false, now, wall(1));
    assert!(
        matches!(&d, Decision::Write { acquiring: true, record } if record.transitions == 3 && record.is_held_by(ME)),
        "{d:?}"
    );
}

#[test]
fn our_own_lease_should_be_renewed_keeping_acquire_time_and_transitions() {
    let seen = Instant::now();
    let o = observed(held_by(ME, 7), seen);
    // Even long after expiry: it is still ours, nobody took it.
    let d = decide_as_me(Some(&o), true, seen + Duration::from_secs(60), wall(99));
    assert_eq!(
        d,
        Decision::Write {
            record: LeaseRecord {
                renew_time: Some(wall(99)),
                ..held_by(ME, 7)
            },
            acquiring: false,
        }
    );
}

#[test]
fn leader_should_see_a_lease_taken_by_another_as_lost_even_if_expired() {
    let seen = Instant::now();
    let o = observed(held_by(OTHER, 1), seen);
    for later in [Duration::ZERO, Duration::from_secs(100)] {
        let d = decide_as_me(Some(&o), true, seen + later, wall(0));
        assert_eq!(d, Decision::Lost { holder: OTHER.into() });
    }
}

#[test]
fn observation_time_should_restart_only_when_the_record_changes() {
    let t0 = Instant::now();
    let first = Observed::update(None, held_by(OTHER, 1), t0);
    let same = Observed::update(
        Some(first.clone()),
        held_by(OTHER, 1),
        t0 + Duration::from_secs(5),
    );
    assert_eq!(
        same.observed_at, t0,
        "an unchanged record must keep its first observation time"
    );
    let mut renewed = held_by(OTHER, 1);
    renewed.renew_time = Some(wall(7));
    let changed = Observed::update(Some(same), renewed, t0 + Duration::from_secs(6));
    assert_eq!(changed.observed_at, t0 + Duration::from_secs(6));
}

#[test]
fn holder_that_stops_renewing_should_expire_lease_duration_after_its_last_change() {
    let t0 = Instant::now();
    let mut o = Observed::update(None, held_by(OTHER, 1), t0);
    for s in 1..15 {
        o = Observed::update(Some(o), held_by(OTHER, 1), t0 + Duration::from_secs(s));
        assert!(o.is_valid_at(t0 + Duration::from_secs(s)), "still valid at {s}s");
    }
    assert!(!o.is_valid_at(t0 + Duration::from_secs(15)));
}

#[test]
fn leader_should_step_down_exactly_at_the_renew_deadline() {
    let t = Timings::DEFAULT;
    let renewed = Instant::now();
    assert!(!renew_deadline_passed(
        renewed,
        renewed + Duration::from_millis(9_999),
        &t
    ));
    assert!(renew_deadline_passed(
        renewed,
        renewed + Duration::from_secs(10),
        &t
    ));
}

#[test]
fn step_down_should_come_before_any_other_candidate_may_acquire() {
    // Others start their expiry clock no earlier than our last renew started.
    let t = Timings::DEFAULT;
    let renew_started = Instant::now();
    let other_sees = Observed::update(None, held_by(ME, 0), renew_started);
    let step_down_at = renew_started + t.renew_deadline;
    assert!(renew_deadline_passed(renew_started, step_down_at, &t));
    assert!(other_sees.is_valid_at(step_down_at));
}

#[test]
fn released_record_should_free_the_lease_and_keep_transitions() {
    let r = released(&held_by(ME, 5), wall(3));
    assert_eq!(r.holder, None);
    assert_eq!(r.transitions, 5);
    assert_eq!(r.lease_duration, Duration::from_secs(1));
    assert_eq!(r.renew_time, Some(wall(3)));
}

#[test]
fn record_should_round_trip_through_a_lease_spec_and_keep_foreign_fields() {
    let mut spec = LeaseSpec {
        strategy: Some("OldestEmulationVersion".into()),
        ..LeaseSpec::default()
    };
    let record = held_by(ME, 2);
    record.write_to(&mut spec);
    assert_eq!(spec.strategy.as_deref(), Some("OldestEmulationVersion"));
    assert_eq!(LeaseRecord::from_spec(Some(&spec)), record);
    let mut freed = LeaseSpec::default();
    released(&record, wall(1)).write_to(&mut freed);
    assert_eq!(freed.holder_identity.as_deref(), Some(""));
    assert_eq!(
        LeaseRecord::from_spec(Some(&freed)).holder,
        None,
        "empty holder reads as free"
    );
    assert_eq!(LeaseRecord::from_spec(None).holder, None);
}

#[test]
fn status_should_map_local_expiry_onto_the_wall_clock() {
    let now = Instant::now();
    let o = observed(held_by(OTHER, 4), now - Duration::from_secs(5));
    let wall_now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
    let s = status(Some(&o), Role::Standby, ME, now, wall_now, &Timings::DEFAULT);
    assert_eq!(s.holder.as_deref(), Some(OTHER));
    assert_eq!(s.expires_at, Some(wall_now + Duration::from_secs(10)));
    assert_eq!(s.transitions, 4);
    assert_eq!(s.identity, ME);
    let none = status(None, Role::Leader, ME, now, wall_now, &Timings::DEFAULT);
    assert_eq!(
        (none.holder, none.expires_at, none.role),
        (None, None, Role::Leader)
    );
}
