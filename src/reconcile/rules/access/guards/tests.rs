use super::*;
use crate::reconcile::rules::content::secret_data_from_strings;

fn data(keys: &[&str]) -> SecretData {
    secret_data_from_strings(keys.iter().map(|k| (k.to_string(), "v".to_string())))
}

#[test]
fn missing_keys_should_never_overwrite_an_existing_target() {
    let missing = vec!["B".to_string()];
    assert_eq!(
        missing_keys_decision(&missing, true, &data(&["A"])),
        MissingKeysDecision::LeaveTargetUnchanged
    );
}

#[test]
fn nothing_found_should_not_create_an_empty_target() {
    let missing = vec!["A".to_string()];
    assert_eq!(
        missing_keys_decision(&missing, false, &data(&[])),
        MissingKeysDecision::LeaveTargetUnchanged
    );
}

#[test]
fn a_partial_reveal_should_still_create_a_new_target() {
    let missing = vec!["B".to_string()];
    assert_eq!(
        missing_keys_decision(&missing, false, &data(&["A"])),
        MissingKeysDecision::CreatePartial
    );
}

#[test]
fn nothing_missing_should_write_the_target() {
    assert_eq!(
        missing_keys_decision(&[], true, &data(&["A"])),
        MissingKeysDecision::WriteAll
    );
    assert_eq!(
        missing_keys_decision(&[], false, &data(&[])),
        MissingKeysDecision::WriteAll
    );
}

#[test]
fn cloud_mode_should_need_both_organization_and_project() {
    assert!(missing_cloud_scope(ConnectionMode::Cloud, None, Some("p")));
    assert!(missing_cloud_scope(ConnectionMode::Cloud, Some("o"), Some("")));
    assert!(!missing_cloud_scope(ConnectionMode::Cloud, Some("o"), Some("p")));
    assert!(!missing_cloud_scope(ConnectionMode::Ferrvault, None, None));
}
