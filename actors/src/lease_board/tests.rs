use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::{
    api::coordination::v1::LeaseSpec,
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
};

use super::*;

/// Lease `name` held by `holder` (`None`: released), renewed `renewed` seconds into the test.
fn lease(name: &str, holder: Option<&str>, renewed: i64) -> Lease {
    let at = MicroTime(Timestamp::from_second(1_800_000_000 + renewed).expect("valid timestamp"));
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.unwrap_or_default().to_owned()),
            lease_duration_seconds: Some(15),
            renew_time: Some(at.clone()),
            acquire_time: Some(at),
            ..LeaseSpec::default()
        }),
    }
}

fn shards(n: u32) -> Shards {
    Shards::new(n).expect("valid shard count")
}

fn names<const K: usize>(ids: [&str; K]) -> BTreeSet<String> {
    ids.into_iter().map(str::to_owned).collect()
}

#[test]
fn board_should_read_members_and_shard_holders_and_ignore_other_leases() {
    let now = Instant::now();
    let mut board = LeaseBoard::new("fv", shards(4));
    board.update(
        &[
            lease("fv-shard-0", Some("a_1"), 0),
            lease("fv-shard-1", None, 0),
            lease("fv-shard-3", Some("b_2"), 0),
            lease("fv-shard-4", Some("ghost"), 0),
            lease("fv-shard-02", Some("ghost"), 0),
            lease("fv-member-pod-a", Some("a_1"), 0),
            lease("fv-member-pod-b", Some("b_2"), 0),
            lease("fv-member-pod-c", None, 0),
            lease("fv", Some("ghost"), 0),
            lease("another-operator-shard-2", Some("ghost"), 0),
        ],
        now,
    );
    assert_eq!(board.members(now), names(["a_1", "b_2"]));
    assert_eq!(
        board.holders(now),
        [(ShardId(0), "a_1".to_owned()), (ShardId(3), "b_2".to_owned())].into()
    );
}

#[test]
fn one_shard_should_be_the_election_lease_itself() {
    let now = Instant::now();
    let mut board = LeaseBoard::new("fv", Shards::ONE);
    board.update(
        &[lease("fv", Some("a_1"), 0), lease("fv-shard-0", Some("ghost"), 0)],
        now,
    );
    assert_eq!(board.holders(now), [(ShardId(0), "a_1".to_owned())].into());
}

#[test]
fn a_lease_should_expire_its_duration_after_we_first_saw_its_record() {
    let t0 = Instant::now();
    let secs = Duration::from_secs;
    let mut board = LeaseBoard::new("fv", shards(2));
    let stale = [
        lease("fv-shard-0", Some("a_1"), 0),
        lease("fv-member-pod-a", Some("a_1"), 0),
    ];
    board.update(&stale, t0);
    // The same record listed again does not restart the clock, whatever its renewTime says
    // against ours.
    board.update(&stale, t0 + secs(10));
    assert_eq!(board.holders(t0 + secs(14)).len(), 1);
    assert!(
        board.holders(t0 + secs(15)).is_empty(),
        "expired 15 s after first seen"
    );
    assert!(board.members(t0 + secs(15)).is_empty());
    // A renewal (a new record) is valid for a full duration from when we see it.
    let renewed = [
        lease("fv-shard-0", Some("a_1"), 12),
        lease("fv-member-pod-a", Some("a_1"), 12),
    ];
    board.update(&renewed, t0 + secs(16));
    assert_eq!(board.holders(t0 + secs(30)).len(), 1);
    assert_eq!(board.members(t0 + secs(30)), names(["a_1"]));
    assert!(board.holders(t0 + secs(31)).is_empty());
}

#[test]
fn a_lease_no_longer_listed_should_be_forgotten() {
    let now = Instant::now();
    let mut board = LeaseBoard::new("fv", shards(2));
    board.update(
        &[
            lease("fv-shard-1", Some("a_1"), 0),
            lease("fv-member-pod-a", Some("a_1"), 0),
        ],
        now,
    );
    board.update(&[], now);
    assert!(board.holders(now).is_empty() && board.members(now).is_empty());
}

#[test]
fn member_leases_should_be_named_after_the_election_id_and_the_pod() {
    assert_eq!(
        member_lease_name("fv", "operator-7d9c-x2"),
        "fv-member-operator-7d9c-x2"
    );
}
