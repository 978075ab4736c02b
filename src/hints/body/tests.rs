use super::*;

#[test]
fn parser_should_take_a_vault_and_optional_names() {
    assert_eq!(
        parse_hint(br#"{"vault":"payments"}"#),
        Ok(Hint {
            vault: "payments".into(),
            names: None
        })
    );
    let hint = parse_hint(br#"{"names":["B","A","B"],"vault":"payments"}"#).expect("a hint");
    assert_eq!(
        hint.names.map(|n| n.into_iter().collect::<Vec<_>>()),
        Some(vec!["A".to_owned(), "B".to_owned()])
    );
}

#[test]
fn parser_should_refuse_every_malformed_body_without_quoting_it() {
    let long = "x".repeat(MAX_NAME_BYTES + 1);
    let too_many = format!(
        r#"{{"vault":"v","names":[{}]}}"#,
        (0..=MAX_NAMES)
            .map(|n| format!("\"n{n}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let cases = [
        ("empty", String::new()),
        ("not JSON", "vault=payments".into()),
        ("no vault", r#"{"names":["A"]}"#.into()),
        ("empty vault", r#"{"vault":""}"#.into()),
        ("vault not a string", r#"{"vault":7}"#.into()),
        ("long vault", format!(r#"{{"vault":"{long}"}}"#)),
        ("long name", format!(r#"{{"vault":"v","names":["{long}"]}}"#)),
        ("empty name", r#"{"vault":"v","names":[""]}"#.into()),
        ("too many names", too_many),
        ("unknown field", r#"{"vault":"v","SECRET-FIELD":1}"#.into()),
        ("repeated vault", r#"{"vault":"v","vault":"w"}"#.into()),
        ("trailing bytes", r#"{"vault":"v"} {}"#.into()),
        ("an array", r#"["v"]"#.into()),
        ("names not a list", r#"{"vault":"v","names":"A"}"#.into()),
    ];
    for (case, body) in cases {
        let error = parse_hint(body.as_bytes()).expect_err(case).to_string();
        assert!(
            !error.contains("SECRET") && !error.contains(&long),
            "{case}: {error}"
        );
    }
}

#[test]
fn parser_should_take_exactly_the_bound_of_names() {
    let body = format!(
        r#"{{"vault":"v","names":[{}]}}"#,
        (0..MAX_NAMES)
            .map(|n| format!("\"n{n}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let hint = parse_hint(body.as_bytes()).expect("at the bound");
    assert_eq!(hint.names.map(|n| n.len()), Some(MAX_NAMES));
}
