use super::*;

const NOW: i64 = 1_800_000_000;

/// One row of the table: name, timestamp header, signature header, body, verdict.
type Case<'a> = (
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    &'a [u8],
    Result<(), SignatureRefusal>,
);
const BODY: &[u8] = br#"{"vault":"payments"}"#;

fn key() -> HintKey {
    HintKey::new(b"0123456789abcdef0123456789abcdef").expect("long enough")
}

fn check(
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
) -> Result<Verified, SignatureRefusal> {
    verify(
        &key(),
        Signed {
            timestamp: timestamp.map(str::as_bytes),
            signature: signature.map(str::as_bytes),
            body,
        },
        NOW,
    )
}

#[test]
fn verifier_should_decide_every_case_of_the_table() {
    let ts = NOW.to_string();
    let good = sign(&key(), &ts, BODY);
    let other_key = sign(
        &HintKey::new(b"another key of 32 bytes, not it!").expect("long enough"),
        &ts,
        BODY,
    );
    let old_ts = (NOW - 301).to_string();
    let old = sign(&key(), &old_ts, BODY);
    let future_ts = (NOW + 301).to_string();
    let future = sign(&key(), &future_ts, BODY);
    let edge_ts = (NOW - 300).to_string();
    let edge = sign(&key(), &edge_ts, BODY);
    let upper = format!("sha256={}", good["sha256=".len()..].to_uppercase());
    let sha1 = good.replace("sha256=", "sha1=");
    let unauthorized = Err(SignatureRefusal::Unauthorized);
    let cases: Vec<Case<'_>> = vec![
        ("signed now", Some(&ts), Some(&good), BODY, Ok(())),
        ("upper-case hex", Some(&ts), Some(&upper), BODY, Ok(())),
        ("at the window's edge", Some(&edge_ts), Some(&edge), BODY, Ok(())),
        ("no timestamp", None, Some(&good), BODY, unauthorized),
        ("no signature", Some(&ts), None, BODY, unauthorized),
        ("another key", Some(&ts), Some(&other_key), BODY, unauthorized),
        (
            "body changed",
            Some(&ts),
            Some(&good),
            br#"{"vault":"payroll"}"#,
            unauthorized,
        ),
        (
            "timestamp changed",
            Some(&old_ts),
            Some(&good),
            BODY,
            unauthorized,
        ),
        (
            "no scheme",
            Some(&ts),
            Some(&good["sha256=".len()..]),
            BODY,
            unauthorized,
        ),
        ("sha1 scheme", Some(&ts), Some(&sha1), BODY, unauthorized),
        (
            "short tag",
            Some(&ts),
            Some(&good[..good.len() - 2]),
            BODY,
            unauthorized,
        ),
        ("negative timestamp", Some("-1"), Some(&good), BODY, unauthorized),
        (
            "timestamp with space",
            Some(" 1"),
            Some(&good),
            BODY,
            unauthorized,
        ),
        (
            "13-digit timestamp",
            Some("1800000000000"),
            Some(&good),
            BODY,
            unauthorized,
        ),
        (
            "old, signed",
            Some(&old_ts),
            Some(&old),
            BODY,
            Err(SignatureRefusal::Stale),
        ),
        (
            "future, signed",
            Some(&future_ts),
            Some(&future),
            BODY,
            Err(SignatureRefusal::Stale),
        ),
    ];
    for (case, timestamp, signature, body, expected) in cases {
        let got = check(timestamp, signature, body).map(|_| ());
        assert_eq!(got, expected, "{case}");
    }
}

#[test]
fn verified_hints_should_carry_their_mac_and_time() {
    let ts = NOW.to_string();
    let verified = check(Some(&ts), Some(&sign(&key(), &ts, BODY)), BODY).expect("signed");
    assert_eq!(verified.sent_at, NOW);
    assert_eq!(
        format!("sha256={}", hex::encode(verified.tag)),
        sign(&key(), &ts, BODY)
    );
}

#[test]
fn key_should_refuse_short_bytes_and_never_print_them() {
    assert!(HintKey::new(b"fifteen bytes!!").is_none());
    let key = HintKey::new(b"SECRET-HINT-KEY-0123456789").expect("long enough");
    assert!(!format!("{key:?}").contains("SECRET"));
    let ts = NOW.to_string();
    let verified = verify(
        &key,
        Signed {
            timestamp: Some(ts.as_bytes()),
            signature: Some(sign(&key, &ts, BODY).as_bytes()),
            body: BODY,
        },
        NOW,
    )
    .expect("signed");
    assert!(!format!("{verified:?}").contains(&hex::encode(verified.tag)));
}
