use super::*;

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn missing_keys_should_retry_within_a_minute_even_when_refresh_is_disabled() {
    assert_eq!(requeue_after(RequeueCase::KeysMissing, 60 * MINUTE), Some(MINUTE));
    assert_eq!(
        requeue_after(RequeueCase::KeysMissing, Duration::from_secs(20)),
        Some(Duration::from_secs(20))
    );
    assert_eq!(
        requeue_after(RequeueCase::KeysMissing, Duration::ZERO),
        Some(MISSING_KEYS_RETRY)
    );
}

#[test]
fn failures_should_retry_within_five_minutes_even_when_refresh_is_disabled() {
    assert_eq!(
        requeue_after(RequeueCase::Failed, 60 * MINUTE),
        Some(FAILURE_RETRY)
    );
    assert_eq!(requeue_after(RequeueCase::Failed, 2 * MINUTE), Some(2 * MINUTE));
    assert_eq!(
        requeue_after(RequeueCase::Failed, Duration::ZERO),
        Some(FAILURE_RETRY)
    );
    assert_eq!(
        requeue_after(RequeueCase::AuthFailed, Duration::ZERO),
        Some(AUTH_FAILED_REQUEUE)
    );
    assert_eq!(requeue_after(RequeueCase::AuthFailed, MINUTE), Some(5 * MINUTE));
}

#[test]
fn an_invalid_spec_should_wait_for_an_edit() {
    assert_eq!(requeue_after(RequeueCase::InvalidSpec, MINUTE), None);
}

#[test]
fn a_refused_target_should_wait_for_a_change_not_a_timer() {
    assert_eq!(requeue_after(RequeueCase::Refused, MINUTE), None);
    assert_eq!(requeue_after(RequeueCase::Refused, Duration::ZERO), None);
}

#[test]
fn no_requeue_should_be_shorter_than_the_floor() {
    let tiny = Duration::from_millis(1);
    for case in [RequeueCase::KeysMissing, RequeueCase::Failed] {
        assert_eq!(requeue_after(case, tiny), Some(MIN_REQUEUE), "{case:?}");
    }
}

#[test]
fn an_invalid_refresh_interval_should_be_an_error_not_the_default() {
    assert!(resolve_refresh_interval("ten minutes", MINUTE).is_err());
    assert_eq!(resolve_refresh_interval("", MINUTE), Ok(MINUTE));
    assert_eq!(resolve_refresh_interval("0s", MINUTE), Ok(Duration::ZERO));
    assert_eq!(
        resolve_refresh_interval("90s", MINUTE),
        Ok(Duration::from_secs(90))
    );
}
