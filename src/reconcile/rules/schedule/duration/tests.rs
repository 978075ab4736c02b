use super::*;

fn ok(text: &str) -> Duration {
    parse_go_duration(text).unwrap_or_else(|e| panic!("{text} should parse: {e}"))
}

fn problem(text: &str) -> DurationProblem {
    parse_go_duration(text).expect_err(text).problem
}

#[test]
fn parse_should_read_the_go_forms_used_in_refresh_intervals() {
    assert_eq!(ok("1h30m"), Duration::from_secs(5400));
    assert_eq!(ok("1.5h"), Duration::from_secs(5400));
    assert_eq!(ok("300ms"), Duration::from_millis(300));
    assert_eq!(ok("2h45m30.5s"), Duration::from_millis(9_930_500));
    assert_eq!(ok("0s"), Duration::ZERO);
    assert_eq!(ok("0"), Duration::ZERO);
    assert_eq!(ok("1h"), Duration::from_secs(3600));
    assert_eq!(ok(".5s"), Duration::from_millis(500));
    assert_eq!(ok("1.s"), Duration::from_secs(1));
    assert_eq!(ok("1m1m"), Duration::from_secs(120));
}

#[test]
fn parse_should_know_every_go_unit_including_both_micro_signs() {
    assert_eq!(ok("7ns"), Duration::from_nanos(7));
    for micro in ["7us", "7\u{b5}s", "7\u{3bc}s"] {
        assert_eq!(ok(micro), Duration::from_micros(7), "{micro}");
    }
    assert_eq!(ok("7ms"), Duration::from_millis(7));
    assert_eq!(ok("7s"), Duration::from_secs(7));
    assert_eq!(ok("7m"), Duration::from_secs(420));
}

#[test]
fn parse_should_truncate_fractions_to_whole_nanoseconds() {
    assert_eq!(ok("1.0000000019s"), Duration::from_nanos(1_000_000_001));
    assert_eq!(
        ok("0.1234567890123456789012345h"),
        Duration::from_nanos(444_444_440_444)
    );
}

#[test]
fn parse_should_refuse_negatives_and_signs_with_a_clear_error() {
    assert_eq!(problem("-1h"), DurationProblem::Signed);
    assert_eq!(problem("+1h"), DurationProblem::Signed);
    let message = parse_go_duration("-5m").unwrap_err().to_string();
    assert!(
        message.contains(r#""-5m""#) && message.contains("sign"),
        "{message}"
    );
}

#[test]
fn parse_should_refuse_garbage_naming_the_problem() {
    assert_eq!(problem(""), DurationProblem::Empty);
    assert_eq!(problem("1"), DurationProblem::MissingUnit(1));
    assert_eq!(problem("10"), DurationProblem::MissingUnit(2));
    assert_eq!(problem("1h30"), DurationProblem::MissingUnit(4));
    assert_eq!(problem("1d"), DurationProblem::UnknownUnit("d".into()));
    assert_eq!(problem("1 h"), DurationProblem::UnknownUnit(" h".into()));
    assert_eq!(problem("h"), DurationProblem::ExpectedNumber(0));
    assert_eq!(problem(" 1h"), DurationProblem::ExpectedNumber(0));
    assert_eq!(problem("."), DurationProblem::ExpectedNumber(0));
    assert_eq!(problem("1h."), DurationProblem::ExpectedNumber(2));
    assert_eq!(problem("1.5.5s"), DurationProblem::MissingUnit(3));
}

#[test]
fn parse_should_refuse_more_than_gos_maximum_duration() {
    assert_eq!(
        ok("2562047h47m16.854775807s"),
        Duration::from_nanos(i64::MAX as u64)
    );
    assert_eq!(problem("2562047h47m16.854775808s"), DurationProblem::Overflow);
    assert_eq!(
        problem("9999999999999999999999999999h"),
        DurationProblem::Overflow
    );
}

#[test]
fn format_should_print_what_go_prints() {
    let cases = [
        (Duration::ZERO, "0s"),
        (Duration::from_nanos(750), "750ns"),
        (Duration::from_nanos(1_500), "1.5\u{b5}s"),
        (Duration::from_millis(300), "300ms"),
        (Duration::from_millis(1_500), "1.5s"),
        (Duration::from_secs(60), "1m0s"),
        (Duration::from_secs(3600), "1h0m0s"),
        (Duration::from_millis(9_930_500), "2h45m30.5s"),
        (Duration::from_nanos(i64::MAX as u64), "2562047h47m16.854775807s"),
    ];
    for (duration, text) in cases {
        assert_eq!(format_go_duration(duration), text);
        assert_eq!(ok(text), duration, "{text} should read back");
    }
}
