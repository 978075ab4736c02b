use super::*;
use crate::reconcile::rules::secret_data_from_strings;

fn data(pairs: &[(&str, &str)]) -> SecretData {
    secret_data_from_strings(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn prefix(value: &str) -> Transform {
    Transform {
        value: Some(value.into()),
        ..Transform::of_type(TransformType::Prefix)
    }
}

fn suffix(value: &str) -> Transform {
    Transform {
        value: Some(value.into()),
        ..Transform::of_type(TransformType::Suffix)
    }
}

fn rename(from: &str, to: &str) -> Transform {
    Transform {
        from: Some(from.into()),
        to: Some(to.into()),
        ..Transform::of_type(TransformType::Rename)
    }
}

fn base64(keys: &[&str]) -> Transform {
    Transform {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        ..Transform::of_type(TransformType::Base64Decode)
    }
}

fn keys(data: &SecretData) -> Vec<&str> {
    data.keys().map(String::as_str).collect()
}

#[test]
fn transforms_should_leave_the_input_untouched_and_return_a_copy() {
    let input = data(&[("a", "1")]);
    let out = apply_transforms(&input, &[prefix("P_")]).unwrap();
    assert_eq!(input, data(&[("a", "1")]));
    assert_eq!(out, data(&[("P_a", "1")]));
    assert_eq!(
        apply_transforms(&SecretData::new(), &[prefix("P_")]).unwrap(),
        SecretData::new()
    );
    assert_eq!(apply_transforms(&input, &[]).unwrap(), input);
}

#[test]
fn prefix_and_suffix_should_rename_every_key_and_stack_when_repeated() {
    let input = data(&[("a", "1"), ("b", "2")]);
    let out = apply_transforms(&input, &[prefix("X_"), prefix("Y_"), suffix("_Z")]).unwrap();
    assert_eq!(out, data(&[("Y_X_a_Z", "1"), ("Y_X_b_Z", "2")]));
}

#[test]
fn empty_prefix_or_suffix_should_be_a_no_op() {
    let input = data(&[("a", "1")]);
    assert_eq!(
        apply_transforms(
            &input,
            &[prefix(""), suffix(""), Transform::of_type(TransformType::Prefix)]
        )
        .unwrap(),
        input
    );
}

#[test]
fn rename_should_move_one_key_and_ignore_a_missing_source_or_a_self_rename() {
    let input = data(&[("a", "1"), ("b", "2")]);
    assert_eq!(
        apply_transforms(&input, &[rename("a", "c")]).unwrap(),
        data(&[("b", "2"), ("c", "1")])
    );
    assert_eq!(
        apply_transforms(&input, &[rename("missing", "c")]).unwrap(),
        input
    );
    assert_eq!(apply_transforms(&input, &[rename("a", "a")]).unwrap(), input);
}

#[test]
fn rename_should_refuse_an_existing_destination() {
    let err = apply_transforms(&data(&[("a", "1"), ("b", "2")]), &[rename("a", "b")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"transforms[0] (rename): destination key "b" already exists"#
    );
}

#[test]
fn rename_should_require_both_fields() {
    for broken in [
        rename("", "b"),
        rename("a", ""),
        Transform::of_type(TransformType::Rename),
    ] {
        let err = apply_transforms(&data(&[("a", "1")]), &[broken]).unwrap_err();
        assert_eq!(err.failure, TransformFailure::RenameNeedsFromAndTo);
        assert_eq!(
            err.to_string(),
            "transforms[0] (rename): rename requires both `from` and `to`"
        );
    }
}

#[test]
fn base64_decode_should_decode_only_the_listed_keys_and_ignore_missing_ones() {
    let input = data(&[("a", "aGVsbG8="), ("b", "aGVsbG8=")]);
    let out = apply_transforms(&input, &[base64(&["a", "missing"])]).unwrap();
    assert_eq!(out, data(&[("a", "hello"), ("b", "aGVsbG8=")]));
}

#[test]
fn base64_decode_should_decode_a_key_listed_twice_only_once() {
    // "YUdWc2JHOD0=" is base64 of "aGVsbG8=", itself base64 of "hello".
    let out = apply_transforms(&data(&[("a", "YUdWc2JHOD0=")]), &[base64(&["a", "a"])]).unwrap();
    assert_eq!(out, data(&[("a", "aGVsbG8=")]));
}

#[test]
fn base64_decode_without_keys_should_decode_every_key() {
    let out = apply_transforms(&data(&[("a", "aGVsbG8="), ("b", "d29ybGQ=")]), &[base64(&[])]).unwrap();
    assert_eq!(out, data(&[("a", "hello"), ("b", "world")]));
}

#[test]
fn base64_decode_should_fall_back_to_the_url_safe_alphabet_and_ignore_line_breaks() {
    // 0xfb 0xff encodes as "+/8=" standard and "-_8=" URL-safe.
    let out = apply_transforms(&data(&[("u", "-_8="), ("n", "aGVs\nbG8=\r\n")]), &[base64(&[])]).unwrap();
    assert_eq!(out["u"], vec![0xfb, 0xff]);
    assert_eq!(out["n"], b"hello".to_vec());
}

#[test]
fn base64_decode_should_keep_binary_results_as_bytes() {
    let binary: Vec<u8> = vec![0x00, 0xff, 0xfe, 0x80, 0x0a];
    let encoded = base64::engine::general_purpose::STANDARD.encode(&binary);
    let out = apply_transforms(&data(&[("bin", &encoded)]), &[base64(&["bin"])]).unwrap();
    assert_eq!(out["bin"], binary);
}

#[test]
fn base64_decode_should_name_the_key_but_never_the_value_when_it_fails() {
    let err = apply_transforms(&data(&[("k", "s3cr3t!!")]), &[base64(&["k"])]).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"transforms[0] (base64Decode): key "k": not valid base64"#
    );
    assert!(!format!("{err:?}").contains("s3cr3t"));
}

#[test]
fn json_expand_should_require_a_key() {
    let blank = Transform {
        key: Some(String::new()),
        ..Transform::of_type(TransformType::JsonExpand)
    };
    for broken in [blank, Transform::of_type(TransformType::JsonExpand)] {
        let err = apply_transforms(&data(&[("a", "{}")]), &[broken]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "transforms[0] (jsonExpand): jsonExpand requires `key`"
        );
    }
}

#[test]
fn transforms_should_compose_in_the_order_given() {
    let input = data(&[("a", "1")]);
    let rename_then_prefix = apply_transforms(&input, &[rename("a", "b"), prefix("P_")]).unwrap();
    assert_eq!(keys(&rename_then_prefix), ["P_b"]);
    // After the prefix, "a" no longer exists, so the rename is a no-op.
    let prefix_then_rename = apply_transforms(&input, &[prefix("P_"), rename("a", "b")]).unwrap();
    assert_eq!(keys(&prefix_then_rename), ["P_a"]);
}

#[test]
fn transform_errors_should_carry_the_index_and_type_of_the_failing_step() {
    let steps = [prefix("P_"), rename("P_a", "P_b"), base64(&["P_b"])];
    let err = apply_transforms(&data(&[("a", "@@"), ("b", "2")]), &steps).unwrap_err();
    assert_eq!((err.index, err.transform), (1, TransformType::Rename));
    let err = apply_transforms(&data(&[("a", "@@")]), &steps).unwrap_err();
    assert_eq!((err.index, err.transform), (2, TransformType::Base64Decode));
}

#[test]
fn sample_pipeline_should_produce_the_documented_keys() {
    let sample: crate::api::FerrVaultSecret = crate::api::samples::SECRET_WITH_TRANSFORMS
        .split("\n---\n")
        .find_map(|doc| serde_norway::from_str(doc).ok())
        .expect("the sample holds a FerrVaultSecret");
    let input = data(&[
        ("DATABASE", r#"{"host":"db","port":5432}"#),
        ("TLS_CERT_B64", "AP8="),
        ("api_key", "k"),
    ]);
    let out = apply_transforms(&input, &sample.spec.transforms).unwrap();
    assert_eq!(
        keys(&out),
        [
            "APP_API_KEY",
            "APP_DATABASE_HOST",
            "APP_DATABASE_PORT",
            "APP_TLS_CERT"
        ]
    );
    assert_eq!(out["APP_TLS_CERT"], vec![0x00, 0xff]);
}

#[test]
fn an_unknown_transform_type_should_fail_alone_with_a_message_naming_the_valid_types() {
    let steps = [prefix("P_"), Transform::of_type(TransformType::Unknown)];
    let err = apply_transforms(&data(&[("a", "1")]), &steps).unwrap_err();
    assert_eq!(err.index, 1);
    assert_eq!(err.failure, TransformFailure::UnknownType);
    assert_eq!(
        err.to_string(),
        "transforms[1] (unknown): unknown transform type; expected prefix, suffix, rename, base64Decode or jsonExpand"
    );
}
