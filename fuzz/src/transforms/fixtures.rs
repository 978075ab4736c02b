//! Realistic starting points of the `transforms` target, from the operator's sample, the
//! simulator's vaults and the transform tests, each with [`MARKER`] in its values. A seed of one
//! byte `i` runs fixture `i` unchanged; the fuzzer's further bytes edit it ([`super::case`]).

use base64::{Engine as _, engine::general_purpose};
use ferrvault_operator::{
    api::{Transform, TransformType},
    rules::json_expand::{MAX_DEPTH, MAX_VALUES},
};

use super::MARKER;

/// Revealed values and the `spec.transforms` applied to them.
pub struct Fixture {
    /// Key names and values, as the reveal hands them to the reconciler.
    pub data: Vec<(String, String)>,
    /// The pipeline.
    pub steps: Vec<Transform>,
}

/// How many fixtures there are; byte `i` picks fixture `i % COUNT`.
pub const COUNT: u8 = 9;

/// Fixture `index % COUNT`.
pub fn fixture(index: u8) -> Fixture {
    match index % COUNT {
        0 => chart_sample(),
        1 => simulator_vault(),
        2 => json_printing(),
        3 => base64_everything(),
        4 => collisions(),
        5 => go_era_incomplete_steps(),
        6 => prefix_over_the_limit(),
        7 => multiplying_json(),
        _ => json_over_its_caps(),
    }
}

fn secret(text: &str) -> String {
    format!("{text}-{MARKER}")
}

fn step(type_: TransformType) -> Transform {
    Transform::of_type(type_)
}

fn prefix(value: &str) -> Transform {
    Transform {
        value: Some(value.into()),
        ..step(TransformType::Prefix)
    }
}

fn suffix(value: &str) -> Transform {
    Transform {
        value: Some(value.into()),
        ..step(TransformType::Suffix)
    }
}

fn rename(from: &str, to: &str) -> Transform {
    Transform {
        from: Some(from.into()),
        to: Some(to.into()),
        ..step(TransformType::Rename)
    }
}

fn base64_decode(keys: &[&str]) -> Transform {
    Transform {
        keys: keys.iter().map(|&key| key.into()).collect(),
        ..step(TransformType::Base64Decode)
    }
}

fn json_expand(key: &str) -> Transform {
    Transform {
        key: Some(key.into()),
        ..step(TransformType::JsonExpand)
    }
}

fn pairs(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect()
}

/// `src/api/samples/secret-with-transforms.yaml` over the values its comments describe.
fn chart_sample() -> Fixture {
    let pem = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        secret("MIIB")
    );
    Fixture {
        data: pairs(&[
            (
                "DATABASE",
                format!(r#"{{"host":"db","port":5432,"password":"{}"}}"#, secret("pw")),
            ),
            ("TLS_CERT_B64", general_purpose::STANDARD.encode(pem)),
            ("api_key", secret("sk_live_0123456789")),
        ]),
        steps: vec![
            json_expand("DATABASE"),
            base64_decode(&["TLS_CERT_B64"]),
            rename("TLS_CERT_B64", "TLS_CERT"),
            rename("api_key", "API_KEY"),
            prefix("APP_"),
        ],
    }
}

/// The simulator's `prod` vault (`simulators/src/ferrvault/sample.yaml`), renamed per
/// environment.
fn simulator_vault() -> Fixture {
    Fixture {
        data: pairs(&[
            (
                "DB_URL",
                format!("postgres://app:{}@db.prod.internal:5432/shop", secret("s3cret")),
            ),
            ("API_KEY", secret("sk_live_0123456789")),
            (
                "TLS_CERT",
                format!(
                    "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
                    secret("MIIB")
                ),
            ),
        ]),
        steps: vec![
            suffix("_PROD"),
            prefix("SHOP_"),
            rename("SHOP_API_KEY_PROD", "API_KEY"),
        ],
    }
}

/// Every kind of JSON leaf, as `json_expand`'s tests print them.
fn json_printing() -> Fixture {
    let json = format!(
        r#"{{"a":1.5,"b":5432.0,"c":[1,"{m}",{{"y":2}}],"d":1234567.5,"e":0.00001,"f":-0.25,"g":1e3,"h":{{"i":{{"j":null,"k":true,"{m}":"{m}"}}}}}}"#,
        m = MARKER
    );
    Fixture {
        data: pairs(&[("config", json), ("other", secret("v"))]),
        steps: vec![json_expand("config"), suffix("_V1")],
    }
}

/// `base64Decode` of every key: both alphabets, Go's line breaks, and one value that is not base64.
fn base64_everything() -> Fixture {
    let wrapped = general_purpose::STANDARD.encode(secret(&"x".repeat(80)));
    let (head, tail) = wrapped.split_at(76);
    Fixture {
        data: pairs(&[
            (
                "standard",
                general_purpose::STANDARD.encode(secret("bytes\u{0}\u{ff}")),
            ),
            (
                "url_safe",
                general_purpose::URL_SAFE.encode([0xfb, 0xff, 0xbf].repeat(4)),
            ),
            ("wrapped", format!("{head}\r\n{tail}")),
            ("z_not_base64", secret("not base64")),
        ]),
        steps: vec![base64_decode(&[]), prefix("B_")],
    }
}

/// A flattened key and a renamed key that already exist.
fn collisions() -> Fixture {
    Fixture {
        data: pairs(&[
            (
                "db",
                format!(r#"{{"host":"{}","a_b":"1","a":{{"b":"2"}}}}"#, MARKER),
            ),
            ("DB_HOST", secret("old")),
            ("from", secret("moved")),
            ("to", secret("kept")),
        ]),
        steps: vec![rename("from", "to"), json_expand("db")],
    }
}

/// Go-era steps missing the fields their type needs, and a type outside the CRD's enum.
fn go_era_incomplete_steps() -> Fixture {
    Fixture {
        data: pairs(&[("k", secret("v"))]),
        steps: vec![
            prefix(""),
            Transform {
                from: Some("k".into()),
                ..step(TransformType::Rename)
            },
            step(TransformType::JsonExpand),
            step(TransformType::Unknown),
        ],
    }
}

/// 4,096 keys (the reveal's most) under a 253-character prefix: over a Secret's 1 MiB before it
/// is built.
fn prefix_over_the_limit() -> Fixture {
    Fixture {
        data: (0..4096)
            .map(|i| (format!("K{i:04}"), secret(&"v".repeat(i % 64))))
            .collect(),
        steps: vec![prefix(&"P".repeat(253))],
    }
}

/// Ten levels of 10,000-character names over 2,000 leaves: 200 MB if it were expanded.
fn multiplying_json() -> Fixture {
    let leaves: Vec<String> = (0..2000).map(|i| format!(r#""l{i}":"{MARKER}""#)).collect();
    let mut json = format!("{{{}}}", leaves.join(","));
    for level in 0..10u8 {
        let name = char::from(b'a' + level).to_string().repeat(10_000);
        json = format!(r#"{{"{name}":{json}}}"#);
    }
    Fixture {
        data: pairs(&[("x", json)]),
        steps: vec![json_expand("x")],
    }
}

/// JSON one level deeper than [`MAX_DEPTH`], and with more than [`MAX_VALUES`] values.
fn json_over_its_caps() -> Fixture {
    let deep = format!(
        "{}\"{MARKER}\"{}",
        r#"{"a":"#.repeat(MAX_DEPTH + 1),
        "}".repeat(MAX_DEPTH + 1)
    );
    let wide = format!(
        r#"{{"a":[{}]}}"#,
        vec![format!("\"{MARKER}\""); MAX_VALUES].join(",")
    );
    Fixture {
        data: pairs(&[("deep", deep), ("wide", wide)]),
        steps: vec![json_expand("wide"), json_expand("deep")],
    }
}
