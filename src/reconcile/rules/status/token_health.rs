//! What a connection's status says about its service-account token (issue 38 point 5), from
//! what `GET /operator/me` answered: `tokenExpiresAt`, `tokenRole` and the `TokenHealthy`
//! condition. Pure: the answer and the time in, the status fields out.
//!
//! # Guarantees
//! - A token that expires within [`EXPIRY_WARNING`] is `TokenHealthy=False`/`TokenExpiresSoon`,
//!   any other `TokenHealthy=True`/`TokenValid`; a server without `me` is
//!   `TokenHealthy=Unknown`/`Unsupported` and is not asked again at the same generation
//!   ([`is_known_unsupported`]).
//! - A 2xx answer that cannot be used (too large, malformed) is `TokenHealthy=Unknown`
//!   with `ResponseTooLarge` or `Unreachable`, keeping the expiry last known.
//! - The message names the time and the role only: nothing the server sent as text (the vault's
//!   slug, labels, ids) reaches the status.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::conditions::{ConditionUpdate, find_condition, upsert_condition};
use crate::{
    api::{ConditionStatus, ConditionType, FerrVaultConnectionStatus, Reason},
    ferrvault::TokenInfo,
};

/// How long before a token's expiry the connection warns (the 7 days).
pub(crate) const EXPIRY_WARNING: Duration = Duration::from_secs(7 * 24 * 3600);

/// What `me` told about the token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TokenReport {
    /// The server answered.
    Known(TokenInfo),
    /// The server does not serve `me` (404 or 405).
    Unsupported,
    /// The server answered `me` with a 2xx the operator cannot use (over its bound, malformed):
    /// `reason` (`ResponseTooLarge` or `Unreachable`) and the client error's words. The expiry
    /// and role last known are kept.
    Unanswered {
        /// The condition's reason.
        reason: Reason,
        /// What failed (the client's error text: names and bounds, never a token).
        message: String,
    },
}

/// Writes `report` (observed at `generation`, at `now`) into `status`; returns the condition's
/// message when the token now expires within [`EXPIRY_WARNING`] while it did not before (or with
/// another expiry), which is when a Warning Event says so.
pub(crate) fn apply(
    status: &mut FerrVaultConnectionStatus,
    report: &TokenReport,
    generation: Option<i64>,
    now: Timestamp,
) -> Option<String> {
    let was_expiring = is_expiring(status);
    let previous_expiry = status.token_expires_at.clone();
    let (condition, reason, message) = match report {
        TokenReport::Unsupported => {
            status.token_expires_at = None;
            status.token_role = None;
            (
                ConditionStatus::Unknown,
                Reason::Unsupported,
                "the server does not serve GET /operator/me: the token's expiry is unknown".to_owned(),
            )
        }
        TokenReport::Unanswered { reason, message } => (
            ConditionStatus::Unknown,
            *reason,
            format!("GET /operator/me failed, the token's expiry is unknown: {message}"),
        ),
        TokenReport::Known(info) => {
            status.token_expires_at = info.expires_at.map(Time);
            status.token_role = Some(info.role.as_str().to_owned());
            verdict(info, now)
        }
    };
    let update = ConditionUpdate {
        type_: ConditionType::TokenHealthy,
        status: condition,
        reason,
        message: message.clone(),
        observed_generation: generation,
    };
    upsert_condition(&mut status.conditions, update, now);
    let warns = is_expiring(status) && (!was_expiring || previous_expiry != status.token_expires_at);
    warns.then_some(message)
}

/// Whether the server was found without `me` at `generation`: then it is not asked again
/// until the spec changes (a new URL may be another server).
pub(crate) fn is_known_unsupported(status: &FerrVaultConnectionStatus, generation: Option<i64>) -> bool {
    find_condition(&status.conditions, ConditionType::TokenHealthy)
        .is_some_and(|c| c.reason == Reason::Unsupported.as_str() && c.observed_generation == generation)
}

fn is_expiring(status: &FerrVaultConnectionStatus) -> bool {
    find_condition(&status.conditions, ConditionType::TokenHealthy)
        .is_some_and(|c| c.reason == Reason::TokenExpiresSoon.as_str())
}

fn verdict(info: &TokenInfo, now: Timestamp) -> (ConditionStatus, Reason, String) {
    let role = info.role;
    let Some(expires_at) = info.expires_at else {
        return (
            ConditionStatus::True,
            Reason::TokenValid,
            format!("the {role} token never expires"),
        );
    };
    let warn_from = expires_at
        .checked_sub(jiff::SignedDuration::try_from(EXPIRY_WARNING).unwrap_or(jiff::SignedDuration::MAX))
        .unwrap_or(Timestamp::MIN);
    if now >= warn_from {
        let when = if now >= expires_at { "expired" } else { "expires" };
        return (
            ConditionStatus::False,
            Reason::TokenExpiresSoon,
            format!("the {role} token {when} at {expires_at}: replace it before syncs fail"),
        );
    }
    (
        ConditionStatus::True,
        Reason::TokenValid,
        format!("the {role} token expires at {expires_at}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ferrvault::TokenRole;

    fn info(expires_in_hours: Option<i64>, now: Timestamp) -> TokenReport {
        TokenReport::Known(TokenInfo {
            vault_slug: "prod".into(),
            role: TokenRole::Viewer,
            expires_at: expires_in_hours.map(|h| now + jiff::SignedDuration::from_hours(h)),
        })
    }

    fn condition(status: &FerrVaultConnectionStatus) -> (String, String) {
        let c = find_condition(&status.conditions, ConditionType::TokenHealthy).expect("written");
        (c.status.clone(), c.reason.clone())
    }

    #[test]
    fn token_health_should_warn_within_seven_days_of_expiry_and_once() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let mut status = FerrVaultConnectionStatus::default();
        assert_eq!(apply(&mut status, &info(Some(8 * 24), now), Some(1), now), None);
        assert_eq!(condition(&status), ("True".into(), "TokenValid".into()));
        assert_eq!(status.token_role.as_deref(), Some("viewer"));
        let warning =
            apply(&mut status, &info(Some(7 * 24), now), Some(1), now).expect("entering the window warns");
        assert!(
            warning.contains("viewer token expires at 2027-01-22"),
            "{warning}"
        );
        assert_eq!(condition(&status), ("False".into(), "TokenExpiresSoon".into()));
        let same = status.token_expires_at.clone();
        let again = TokenReport::Known(TokenInfo {
            vault_slug: "prod".into(),
            role: TokenRole::Viewer,
            expires_at: same.map(|t| t.0),
        });
        assert_eq!(
            apply(&mut status, &again, Some(1), now),
            None,
            "the same expiry warns once"
        );
        assert_eq!(apply(&mut status, &info(None, now), Some(1), now), None);
        assert_eq!(
            (condition(&status).1.as_str(), status.token_expires_at),
            ("TokenValid", None)
        );
    }

    #[test]
    fn a_server_without_me_should_be_unknown_and_remembered_for_its_generation() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let mut status = FerrVaultConnectionStatus::default();
        apply(&mut status, &info(Some(1), now), Some(1), now);
        assert_eq!(apply(&mut status, &TokenReport::Unsupported, Some(1), now), None);
        assert_eq!(condition(&status), ("Unknown".into(), "Unsupported".into()));
        assert_eq!(
            (status.token_expires_at.clone(), status.token_role.clone()),
            (None, None)
        );
        assert!(is_known_unsupported(&status, Some(1)));
        assert!(!is_known_unsupported(&status, Some(2)), "a new spec asks again");
    }
}
