use std::borrow::Cow;

use proptest::prelude::*;

use super::{filters::Filter, parse::Part, *};
use crate::api::{DockerConfigTemplate, Reason};

fn values(pairs: &[(&str, &[u8])]) -> SecretData {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect()
}

fn template(pairs: &[(&str, &str)], policy: Option<TemplateMergePolicy>) -> SecretTemplate {
    SecretTemplate {
        data: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        merge_policy: policy,
        docker_config: None,
    }
}

/// `text` rendered over `data` (Replace), as text, or the error's message.
fn render_one(text: &str, data: &SecretData) -> Result<String, String> {
    render_template(
        data.clone(),
        &template(&[("OUT", text)], Some(TemplateMergePolicy::Replace)),
    )
    .map(|out| String::from_utf8_lossy(&out["OUT"]).into_owned())
    .map_err(|e| e.to_string())
}

#[test]
fn the_parser_should_read_literals_placeholders_filters_and_escapes_as_the_grammar_says() {
    let parsed = parse(r#"a$${b}${ K.1 | trim|default "x\"}\\" }$c"#).expect("parses");
    assert_eq!(
        parsed.parts,
        vec![
            Part::Literal("a${b}".into()),
            Part::Placeholder(parse::Placeholder {
                key: "K.1".into(),
                column: 7,
                filters: vec![(Filter::Trim, 16), (Filter::Default("x\"}\\".into()), 21)],
            }),
            Part::Literal("$c".into()),
        ]
    );
}

#[test]
fn the_parser_should_refuse_bad_templates_with_the_column_of_the_fault() {
    let long_key = format!("${{{}}}", "k".repeat(254));
    let cases: &[(&str, ParseFailure)] = &[
        ("ab${KEY", ParseFailure::Unterminated(3)),
        ("${KEY|trim", ParseFailure::Unterminated(1)),
        ("${}", ParseFailure::Unexpected(3)),
        ("x${KEY/}", ParseFailure::Unexpected(7)),
        ("${KEY|}", ParseFailure::MissingFilter(7)),
        (
            "${KEY|getHostByName}",
            ParseFailure::UnknownFilter {
                name: "getHostByName".into(),
                column: 7,
            },
        ),
        ("${KEY|default}", ParseFailure::MissingArgument(14)),
        ("${KEY|trim \"x\"}", ParseFailure::UnexpectedArgument(12)),
        ("${KEY|default \"x}", ParseFailure::UnterminatedString(15)),
        (
            "é${K|nope}",
            ParseFailure::UnknownFilter {
                name: "nope".into(),
                column: 6,
            },
        ),
        (&long_key, ParseFailure::KeyTooLong(3)),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text).as_ref(), Err(expected), "{text}");
    }
}

#[test]
fn every_filter_should_map_its_input_as_its_table_says() {
    let data = values(&[
        ("V", b" Hello World/?&= "),
        ("B64", b"c2VjcmV0"),
        ("URLB64", b"_-8="),
        ("CTRL", b"a\"b\\c\n\x01"),
        ("EMPTY", b""),
    ]);
    let cases = [
        ("${V|trim}", "Hello World/?&="),
        ("${V|lower}", " hello world/?&= "),
        ("${V|upper}", " HELLO WORLD/?&= "),
        ("${V|trim|urlquery}", "Hello%20World%2F%3F%26%3D"),
        ("${V|base64}", "IEhlbGxvIFdvcmxkLz8mPSA="),
        ("${B64|base64decode}", "secret"),
        ("${URLB64|base64decode|base64}", "/+8="),
        ("${CTRL|json}", r#"a\"b\\c\n\u0001"#),
        ("${EMPTY|default \"d\"}", "d"),
        ("${MISSING|default \"d\"|upper}", "D"),
        ("${V|trim|default \"d\"}", "Hello World/?&="),
        ("${V|trim|lower|base64|base64decode}", "hello world/?&="),
        ("pre ${B64} $${B64} $x", "pre c2VjcmV0 ${B64} $x"),
        ("$$${B64}", "$${B64}"),
    ];
    for (text, expected) in cases {
        assert_eq!(render_one(text, &data).as_deref(), Ok(expected), "{text}");
    }
}

#[test]
fn a_missing_key_or_a_refused_value_should_fail_naming_key_and_column_never_the_value() {
    let data = values(&[("SECRET", b"hunter2-not-base64!"), ("BIN", b"\xff\xfe")]);
    let cases = [
        (
            "postgres://${USER}@h",
            "target.template.data[\"OUT\"]: column 12: key \"USER\" not found (a missing key is never \
             rendered as empty text; `${USER|default \"x\"}` allows it)",
        ),
        (
            "${SECRET|base64decode}",
            "target.template.data[\"OUT\"]: column 10: base64decode refused the value of key \"SECRET\": \
             not valid base64",
        ),
        (
            "ab${BIN|trim|json}",
            "target.template.data[\"OUT\"]: column 14: json refused the value of key \"BIN\": not UTF-8",
        ),
        (
            "${MISSING|trim}",
            "target.template.data[\"OUT\"]: column 1: key \"MISSING\" not found (a missing key is never \
             rendered as empty text; `${MISSING|default \"x\"}` allows it)",
        ),
    ];
    for (text, expected) in cases {
        let message = render_one(text, &data).expect_err(text);
        assert_eq!(message, expected);
        assert!(!message.contains("hunter2"), "{message}");
    }
}

#[test]
fn merge_should_keep_the_revealed_keys_and_replace_should_write_only_the_template() {
    let data = values(&[("USER", b"app"), ("PASS", b"p@ss word"), ("HOST", b"db")]);
    let dsn = "postgres://${USER}:${PASS|urlquery}@${HOST}:5432/app";
    let merged = render_template(data.clone(), &template(&[("DSN", dsn)], None)).expect("renders");
    assert_eq!(
        merged.keys().map(String::as_str).collect::<Vec<_>>(),
        ["DSN", "HOST", "PASS", "USER"]
    );
    assert_eq!(merged["DSN"], b"postgres://app:p%40ss%20word@db:5432/app");
    let replaced = render_template(
        data,
        &template(&[("DSN", dsn)], Some(TemplateMergePolicy::Replace)),
    )
    .expect("renders");
    assert_eq!(replaced.keys().map(String::as_str).collect::<Vec<_>>(), ["DSN"]);
}

#[test]
fn a_target_key_that_is_not_a_secret_key_should_be_refused() {
    let failure = render_template(values(&[]), &template(&[("a/b", "x")], None)).expect_err("refused");
    assert_eq!(failure.failure, TemplateFailure::InvalidTargetKey);
    assert_eq!(failure.reason(), Reason::TemplateError);
}

#[test]
fn an_output_over_the_limit_should_be_refused_before_it_is_built() {
    // 1,000 × 600 KB would be 600 MB: the bound is computed and refused, nothing allocated.
    let data = values(&[("BIG", &[b'a'; 600_000])]);
    let text = "${BIG}".repeat(1000);
    let failure = render_template(data.clone(), &template(&[("OUT", &text)], None)).expect_err("refused");
    assert_eq!(
        failure.failure,
        TemplateFailure::OutputTooLarge {
            bound: (3 + 600_000) + (3 + 600_000_000),
            limit: MAX_SECRET_BYTES
        }
    );
    assert_eq!(failure.reason(), Reason::SecretTooLarge);
    // The worst case counts: 200 KB of `json` could escape to 1.2 MB.
    let data = values(&[("V", &[b'a'; 200_000])]);
    let replace = Some(TemplateMergePolicy::Replace);
    assert!(render_template(data.clone(), &template(&[("OUT", "${V|json}")], replace)).is_err());
    assert!(render_template(data, &template(&[("OUT", "${V|urlquery}")], replace)).is_ok());
}

#[test]
fn merge_should_not_count_a_revealed_value_the_template_replaces() {
    let data = values(&[("BIG", &[b'a'; 900_000]), ("SMALL", b"s")]);
    let out = render_template(data, &template(&[("BIG", "${SMALL}")], None)).expect("fits");
    assert_eq!(out["BIG"], b"s");
}

fn docker(email: Option<&str>) -> SecretTemplate {
    SecretTemplate {
        docker_config: Some(DockerConfigTemplate {
            server: "ghcr.io".into(),
            username_key: "USER".into(),
            password_key: "TOKEN".into(),
            email_key: email.map(str::to_owned),
        }),
        merge_policy: Some(TemplateMergePolicy::Replace),
        ..SecretTemplate::default()
    }
}

#[test]
fn a_docker_config_should_have_the_shape_kubectl_writes() {
    let data = values(&[("USER", b"bot"), ("TOKEN", b"t\"k"), ("MAIL", b"a@b")]);
    let out = render_template(data.clone(), &docker(Some("MAIL"))).expect("renders");
    assert_eq!(
        out.keys().map(String::as_str).collect::<Vec<_>>(),
        [DOCKER_CONFIG_KEY]
    );
    let json: serde_json::Value = serde_json::from_slice(&out[DOCKER_CONFIG_KEY]).expect("JSON");
    assert_eq!(
        json,
        serde_json::json!({"auths": {"ghcr.io": {
            "username": "bot", "password": "t\"k", "email": "a@b", "auth": "Ym90OnQiaw=="
        }}})
    );
    let missing = render_template(data, &docker(Some("NOPE"))).expect_err("refused");
    assert_eq!(
        missing.to_string(),
        "target.template.dockerConfig: emailKey names key \"NOPE\", which is not among the values"
    );
}

/// Any bytes (mostly not UTF-8), or text of the language's own and JSON's special characters.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        "[a-zA-Z0-9 ${}|\"\\\\\n\t\x01=/+]{0,64}".prop_map(String::into_bytes),
    ]
}

/// A template text from the language's pieces (valid or not).
fn template_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("${A}".to_owned()),
        Just("${B|base64}".to_owned()),
        Just("${A|base64decode}".to_owned()),
        Just("${B|json|urlquery}".to_owned()),
        Just("${C|default \"z\"|upper}".to_owned()),
        Just("${A|trim|lower}".to_owned()),
        Just("$${".to_owned()),
        Just("${".to_owned()),
        Just("|}\"".to_owned()),
        "[a-z$ ]{0,4}",
    ];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        Just(Filter::Base64),
        Just(Filter::Base64Decode),
        Just(Filter::Json),
        Just(Filter::UrlQuery),
        Just(Filter::Trim),
        Just(Filter::Lower),
        Just(Filter::Upper),
        "[ -~]{0,8}".prop_map(Filter::Default),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_filter_should_be_total_and_within_its_bound(filter in filter(), value in bytes(), missing: bool) {
        let input = (!missing).then_some(Cow::Borrowed(value.as_slice()));
        let len = if missing { 0 } else { value.len() };
        let bound = filter.max_len(len);
        prop_assert!(bound >= len);
        if let Ok(Some(output)) = filter.apply(input) {
            prop_assert!(output.len() <= bound);
        }
    }

    #[test]
    fn values_should_never_escape_into_keys_nor_into_errors(
        text in template_text(),
        a in bytes(),
        b in bytes(),
        replace: bool,
        with_docker: bool,
    ) {
        let data = values(&[("A", &a), ("B", &b)]);
        let policy = Some(if replace { TemplateMergePolicy::Replace } else { TemplateMergePolicy::Merge });
        let mut spec = template(&[("OUT", &text), ("OTHER", "${A}")], policy);
        if with_docker {
            spec.docker_config = docker(None).docker_config.map(|d| DockerConfigTemplate {
                username_key: "A".into(),
                password_key: "B".into(),
                ..d
            });
        }
        match render_template(data.clone(), &spec) {
            Ok(out) => {
                let mut expected = vec!["OTHER", "OUT"];
                if with_docker {
                    expected.insert(0, DOCKER_CONFIG_KEY);
                }
                if !replace {
                    expected.extend(["A", "B"]);
                    expected.sort_unstable();
                }
                prop_assert_eq!(out.keys().map(String::as_str).collect::<Vec<_>>(), expected);
                let bound = output_bound(&data, &spec).expect("it rendered, so it prepares");
                prop_assert!(crate::reconcile::rules::content::payload_bytes(&out) <= bound);
            }
            Err(error) => {
                let message = error.to_string();
                for value in [&a, &b] {
                    // A value of a few characters could be any word of the message.
                    if value.len() >= 8 {
                        prop_assert!(!message.contains(&*String::from_utf8_lossy(value)), "{}", message);
                    }
                }
            }
        }
    }
}
