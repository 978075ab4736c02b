//! End-to-end: every transform rule reaches the target Secret, as bytes.

use std::collections::BTreeMap;

use crate::operator_support::*;
use ferrvault_operator::api::{Transform, TransformType};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_transform_rule_should_reach_the_target_secret_byte_for_byte() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", OTHER_TOKEN).await;
    let mut spec = secret_spec("conn", "blobs");
    spec.transforms = vec![
        Transform {
            key: Some("CONFIG".into()),
            ..Transform::of_type(TransformType::JsonExpand)
        },
        Transform {
            keys: vec!["CERT".into()],
            ..Transform::of_type(TransformType::Base64Decode)
        },
        Transform {
            from: Some("CERT".into()),
            to: Some("tls.der".into()),
            ..Transform::of_type(TransformType::Rename)
        },
        Transform {
            value: Some("APP_".into()),
            ..Transform::of_type(TransformType::Prefix)
        },
        Transform {
            value: Some("_V1".into()),
            ..Transform::of_type(TransformType::Suffix)
        },
    ];
    h.create_secret("app", spec).await;
    let cr = h.wait_secret_reason("app", "Synced").await;
    let target = h.secrets().get("app").await.unwrap();
    let mut binary = vec![0xff, 0xfe, 0x00, 0x01];
    binary.extend_from_slice(b"LEAKCHECK");
    let expected: BTreeMap<String, Vec<u8>> = BTreeMap::from([
        ("APP_CONFIG_HOST_V1".into(), b"LEAKCHECK-host".to_vec()),
        ("APP_CONFIG_PORT_V1".into(), b"5432".to_vec()),
        ("APP_CONFIG_TLS_V1".into(), b"true".to_vec()),
        ("APP_tls.der_V1".into(), binary),
    ]);
    assert_eq!(
        data_of(&target),
        expected,
        "binary base64Decode output survives as bytes"
    );
    assert_eq!(
        cr.status.unwrap().synced_keys,
        expected.keys().cloned().collect::<Vec<_>>()
    );
    h.finish().await;
}
