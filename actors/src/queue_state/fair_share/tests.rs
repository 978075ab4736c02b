use super::*;

const CHANGED: u8 = 0;
const REFRESH: u8 = 1;

fn key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::namespaced("test", namespace, name)
}

/// Inserts `names` of `namespace` in `lane`, numbered from `first_seq`.
fn fill(fair: &mut FairShare, namespace: &str, names: std::ops::Range<usize>, lane: u8, first_seq: u64) {
    for (i, n) in names.enumerate() {
        fair.insert(key(namespace, &format!("k{n}")), lane, first_seq + i as u64);
    }
}

fn popped_namespace(fair: &mut FairShare) -> Option<String> {
    fair.pop().and_then(|(key, _, _)| key.namespace)
}

#[test]
fn one_namespace_should_never_hold_more_than_its_share_and_another_should_get_the_rest() {
    // The measured incident in miniature: pool of 4, share 3; A has 60 keys, B then 5.
    let mut fair = FairShare::new(3);
    fill(&mut fair, "a", 0..60, CHANGED, 0);
    for _ in 0..3 {
        assert_eq!(popped_namespace(&mut fair).as_deref(), Some("a"));
    }
    assert_eq!(
        fair.pop(),
        None,
        "A holds its share: the fourth worker stays free"
    );
    assert_eq!(fair.held(), 57);
    fill(&mut fair, "b", 0..5, CHANGED, 100);
    assert_eq!(
        popped_namespace(&mut fair).as_deref(),
        Some("b"),
        "B's key takes the free worker at once, though A's keys are older"
    );
    fair.release(&Some("b".into()));
    assert_eq!(popped_namespace(&mut fair).as_deref(), Some("b"));
}

#[test]
fn a_free_worker_should_go_to_the_namespace_holding_the_fewest_then_round_robin() {
    let mut fair = FairShare::new(10);
    fill(&mut fair, "a", 0..10, CHANGED, 0);
    fill(&mut fair, "b", 0..10, CHANGED, 100);
    fill(&mut fair, "c", 0..10, CHANGED, 200);
    let order: Vec<_> = (0..6).map(|_| popped_namespace(&mut fair).unwrap()).collect();
    assert_eq!(order, ["a", "b", "c", "a", "b", "c"]);
    // B finishes both runs: it now holds the fewest, so it goes first.
    fair.release(&Some("b".into()));
    fair.release(&Some("b".into()));
    assert_eq!(popped_namespace(&mut fair).as_deref(), Some("b"));
    // A and C hold two each and B one: B again, then the one served longest ago (A).
    assert_eq!(popped_namespace(&mut fair).as_deref(), Some("b"));
    assert_eq!(popped_namespace(&mut fair).as_deref(), Some("a"));
}

#[test]
fn keys_within_a_namespace_should_keep_lane_and_fifo_order() {
    let mut fair = FairShare::new(10);
    fair.insert(key("a", "refresh-1"), REFRESH, 1);
    fair.insert(key("a", "changed-2"), CHANGED, 2);
    fair.insert(key("a", "changed-3"), CHANGED, 3);
    let names: Vec<_> = std::iter::from_fn(|| fair.pop().map(|(k, _, _)| k.name)).collect();
    assert_eq!(names, ["changed-2", "changed-3", "refresh-1"]);
}

#[test]
fn a_changed_key_should_go_before_any_refresh_unless_its_namespace_holds_its_share() {
    let mut fair = FairShare::new(2);
    fill(&mut fair, "a", 0..5, CHANGED, 0);
    fill(&mut fair, "b", 0..5, REFRESH, 100);
    assert_eq!(popped_namespace(&mut fair).as_deref(), Some("a"));
    assert_eq!(
        popped_namespace(&mut fair).as_deref(),
        Some("a"),
        "A's changes go first while it is below its share, though B holds nothing"
    );
    assert_eq!(
        popped_namespace(&mut fair).as_deref(),
        Some("b"),
        "at its share, A's changes leave the next worker to B's refreshes"
    );
}

#[test]
fn removed_and_released_keys_should_keep_the_figures_exact() {
    let mut fair = FairShare::new(1);
    fill(&mut fair, "a", 0..3, CHANGED, 0);
    assert_eq!(fair.waiting(), 1);
    let (first, _, _) = fair.pop().expect("a key");
    assert_eq!(fair.held(), 2);
    assert_eq!(
        fair.holding(),
        [NamespaceShare {
            namespace: "a".into(),
            in_flight: 1,
            ready: 2,
            at_share: true,
        }]
    );
    fair.remove(&key("a", "k1"), CHANGED, 1);
    assert_eq!(fair.held(), 1);
    fair.release(&first.namespace);
    assert_eq!((fair.held(), fair.holding().len()), (0, 0));
    fair.remove(&key("a", "k2"), CHANGED, 2);
    assert_eq!(fair.waiting(), 0);
    assert!(fair.namespaces.is_empty(), "an idle namespace is forgotten");
}

#[test]
fn cluster_scoped_keys_should_share_one_bucket() {
    let mut fair = FairShare::new(1);
    for i in 0..2 {
        fair.insert(
            ObjectKey {
                controller: "test",
                namespace: None,
                name: format!("c{i}"),
            },
            CHANGED,
            i,
        );
    }
    assert!(fair.pop().is_some());
    assert_eq!(
        fair.pop(),
        None,
        "both are in the cluster-scoped bucket, at its share"
    );
    assert_eq!(fair.holding()[0].namespace, "");
}

#[test]
#[should_panic(expected = "a release without a dispatch violated")]
fn a_release_without_a_dispatch_should_panic() {
    FairShare::new(1).release(&Some("a".into()));
}
