use super::*;

fn shards(n: u32) -> Shards {
    Shards::new(n).expect("valid shard count")
}

fn members(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

fn holders(pairs: &[(u16, &str)]) -> BTreeMap<ShardId, String> {
    pairs
        .iter()
        .map(|(s, h)| (ShardId(*s), (*h).to_owned()))
        .collect()
}

/// How many shards each member holds in `assignment`, members without shards included.
fn loads<'m>(
    members: &'m BTreeSet<String>,
    assignment: &BTreeMap<ShardId, &str>,
) -> BTreeMap<&'m str, usize> {
    members
        .iter()
        .map(|m| {
            (
                m.as_str(),
                assignment.values().filter(|h| **h == m.as_str()).count(),
            )
        })
        .collect()
}

/// `count` member identities `r0, r1, …`.
fn ids(count: usize) -> BTreeSet<String> {
    (0..count).map(|i| format!("r{i}")).collect()
}

/// Asserts the balance rule: every shard assigned to a member, loads in `{floor, ceil}`, and
/// exactly `N mod R` members at the ceiling.
fn assert_balanced(n: Shards, members: &BTreeSet<String>, assignment: &BTreeMap<ShardId, &str>, case: &str) {
    let (count, replicas) = (usize::from(n.count()), members.len());
    assert_eq!(assignment.len(), count, "{case}: every shard is assigned");
    assert!(
        assignment.values().all(|h| members.contains(*h)),
        "{case}: only members hold shards"
    );
    let loads = loads(members, assignment);
    let (floor, cap) = (count / replicas, n.cap(replicas));
    assert!(
        loads.values().all(|l| (floor..=cap).contains(l)),
        "{case}: loads {loads:?}"
    );
    let at_cap = loads.values().filter(|l| **l == cap && cap > floor).count();
    assert_eq!(
        at_cap,
        if cap > floor { count % replicas } else { 0 },
        "{case}: loads {loads:?}"
    );
}

fn as_holders(assignment: &BTreeMap<ShardId, &str>) -> BTreeMap<ShardId, String> {
    assignment.iter().map(|(s, h)| (*s, (*h).to_owned())).collect()
}

#[test]
fn fnv1a64_should_match_the_fnv_reference_vectors() {
    // FNV reference test suite (test_fnv.c, FNV1A_64 column) and draft-eastlake-fnv.
    let cases: [(&[u8], u64); 6] = [
        (b"", 0xcbf2_9ce4_8422_2325),
        (b"a", 0xaf63_dc4c_8601_ec8c),
        (b"b", 0xaf63_df4c_8601_f1a5),
        (b"foobar", 0x8594_4171_f739_67e8),
        (b"chongo was here!\n", 0x4681_0940_eff5_f915),
        (b"\0", 0xaf63_bd4c_8601_b7df),
    ];
    for (input, expected) in cases {
        assert_eq!(fnv1a64(input), expected, "fnv1a64({input:?})");
    }
    assert_eq!(FNV1A64_PRIME, 1_099_511_628_211);
    assert_eq!(FNV1A64_OFFSET_BASIS, 14_695_981_039_346_656_037);
}

#[test]
fn shard_of_a_namespace_should_be_its_fnv1a64_hash_modulo_n() {
    let cases = [
        ("default", 8, 0xebad_a516_8620_c5fe_u64 % 8),
        ("kube-system", 8, 0xdf65_c7bc_1d82_b35e % 8),
        ("tenant-a", 8, 0xc2ef_8128_e3eb_9efb % 8),
        ("", 8, 0xcbf2_9ce4_8422_2325 % 8),
        ("tenant-a", 3, 0xc2ef_8128_e3eb_9efb % 3),
        ("tenant-a", 1, 0),
    ];
    for (namespace, n, expected) in cases {
        let expected = ShardId(u16::try_from(expected).expect("small"));
        assert_eq!(
            shards(n).of_namespace(namespace),
            expected,
            "{namespace:?} of {n}"
        );
    }
}

#[test]
fn one_shard_should_hold_every_namespace_under_todays_lease_name() {
    for namespace in [
        "",
        "default",
        "tenant-a",
        "a-very-long-namespace-name-of-sixty-three-characters-xxxxxxxxxx",
    ] {
        assert_eq!(Shards::ONE.of_namespace(namespace), ShardId(0));
    }
    assert_eq!(
        Shards::ONE.lease_name("ferrvault-operator", ShardId(0)),
        "ferrvault-operator"
    );
    assert!(!Shards::ONE.is_sharded());
}

#[test]
fn shard_leases_should_be_named_after_the_election_id_and_the_shard() {
    let n = shards(8);
    let names: Vec<String> = n.all().map(|s| n.lease_name("fv", s)).collect();
    assert_eq!(names.first().map(String::as_str), Some("fv-shard-0"));
    assert_eq!(names.last().map(String::as_str), Some("fv-shard-7"));
    assert_eq!(names.len(), 8);
}

#[test]
fn shard_count_should_be_refused_outside_one_to_max() {
    let cases = [
        (0, false),
        (1, true),
        (8, true),
        (u32::from(Shards::MAX), true),
        (u32::from(Shards::MAX) + 1, false),
        (70_000, false),
    ];
    for (count, ok) in cases {
        assert_eq!(Shards::new(count).is_ok(), ok, "{count}");
    }
    assert_eq!(Shards::new(0), Err(ShardsError::OutOfRange { got: 0 }));
}

#[test]
fn cap_should_be_the_ceiling_of_shards_over_replicas() {
    let cases = [
        (8, 0, 8),
        (8, 1, 8),
        (8, 3, 3),
        (8, 4, 2),
        (8, 5, 2),
        (8, 8, 1),
        (8, 9, 1),
        (1, 4, 1),
    ];
    for (n, replicas, cap) in cases {
        assert_eq!(shards(n).cap(replicas), cap, "{n} shards over {replicas}");
    }
}

#[test]
fn namespaces_should_spread_over_the_shards() {
    let n = shards(8);
    let mut per_shard = [0_usize; 8];
    for i in 0..8_000 {
        per_shard[usize::from(n.of_namespace(&format!("tenant-{i}")).0)] += 1;
    }
    // 1,000 expected each; FNV-1a on these names stays well within ±15 %.
    assert!(
        per_shard.iter().all(|c| (850..=1150).contains(c)),
        "{per_shard:?}"
    );
}

#[test]
fn target_should_balance_every_shape_from_nothing_and_from_one_holder() {
    for n in 1..=16 {
        for replicas in 1..=9 {
            let (n, members) = (shards(n), ids(replicas));
            let all_on_first: BTreeMap<ShardId, String> = n.all().map(|s| (s, "r0".to_owned())).collect();
            for (start, observed) in [("nothing held", BTreeMap::new()), ("r0 holds all", all_on_first)] {
                let case = format!("{} shards, {replicas} replicas, {start}", n.count());
                assert_balanced(n, &members, &target(n, &members, &observed), &case);
            }
        }
    }
}

#[test]
fn target_should_keep_a_balanced_assignment_unchanged() {
    for n in 1..=16 {
        for replicas in 1..=9 {
            let (n, members) = (shards(n), ids(replicas));
            let first = target(n, &members, &BTreeMap::new());
            let observed = as_holders(&first);
            assert_eq!(
                target(n, &members, &observed),
                first,
                "{} shards, {replicas}",
                n.count()
            );
            for me in &members {
                let mine = first
                    .iter()
                    .filter(|(_, h)| **h == me.as_str())
                    .map(|(s, _)| *s)
                    .collect();
                let plan = plan(n, me, &members, &observed, &mine);
                assert!(plan.is_idle(), "{me} churns: {plan:?}");
            }
        }
    }
}

/// Shards, holders before, members after, how many shards must move.
type MoveCase = (
    u32,
    &'static [(u16, &'static str)],
    &'static [&'static str],
    usize,
);

#[test]
fn target_should_move_only_the_shards_a_change_of_members_requires() {
    // (shards, holders before, members after, shards that must move)
    let cases: [MoveCase; 6] = [
        // A fourth replica joins three holding 3/3/2 of 8: it takes 2, one from each of the 3s.
        (
            8,
            &[
                (0, "a"),
                (1, "a"),
                (2, "a"),
                (3, "b"),
                (4, "b"),
                (5, "b"),
                (6, "c"),
                (7, "c"),
            ],
            &["a", "b", "c", "d"],
            2,
        ),
        // c leaves: its 2 shards go to a and b, nothing else moves (a 3, b 3... cap 4).
        (
            8,
            &[
                (0, "a"),
                (1, "a"),
                (2, "a"),
                (3, "b"),
                (4, "b"),
                (5, "b"),
                (6, "c"),
                (7, "c"),
            ],
            &["a", "b"],
            2,
        ),
        // A second replica joins one holding all 8: exactly half move.
        (
            8,
            &[
                (0, "a"),
                (1, "a"),
                (2, "a"),
                (3, "a"),
                (4, "a"),
                (5, "a"),
                (6, "a"),
                (7, "a"),
            ],
            &["a", "b"],
            4,
        ),
        // 2,2,2,2 over five members: the new one takes one shard from a single replica.
        (
            8,
            &[
                (0, "a"),
                (1, "a"),
                (2, "b"),
                (3, "b"),
                (4, "c"),
                (5, "c"),
                (6, "d"),
                (7, "d"),
            ],
            &["a", "b", "c", "d", "e"],
            1,
        ),
        // Nothing changes: nothing moves.
        (4, &[(0, "a"), (1, "b"), (2, "a"), (3, "b")], &["a", "b"], 0),
        // Balanced with the larger shares on the larger identities: kept as it is.
        (
            8,
            &[
                (0, "a"),
                (1, "a"),
                (2, "b"),
                (3, "b"),
                (4, "b"),
                (5, "c"),
                (6, "c"),
                (7, "c"),
            ],
            &["a", "b", "c"],
            0,
        ),
    ];
    for (n, before, after, moved) in cases {
        let (n, before, after) = (shards(n), holders(before), members(after));
        let next = target(n, &after, &before);
        assert_balanced(n, &after, &next, &format!("{before:?} → {after:?}"));
        let actually_moved = next
            .iter()
            .filter(|(s, h)| before.get(*s).map(String::as_str) != Some(**h))
            .count();
        assert_eq!(actually_moved, moved, "{before:?} → {after:?}: {next:?}");
    }
}

#[test]
fn plan_should_release_before_anyone_acquires_and_never_take_a_held_shard() {
    let n = shards(4);
    let all = members(&["a", "b"]);
    let a_holds_all = holders(&[(0, "a"), (1, "a"), (2, "a"), (3, "a")]);
    let mine_a: BTreeSet<ShardId> = n.all().collect();
    // b joined: a gives up two shards, b takes nothing while a still holds them.
    let plan_a = plan(n, "a", &all, &a_holds_all, &mine_a);
    assert_eq!(plan_a.release, [ShardId(2), ShardId(3)].into());
    assert!(plan_a.acquire.is_empty());
    assert!(plan(n, "b", &all, &a_holds_all, &BTreeSet::new()).is_idle());
    // Once a's release is seen, b acquires exactly those.
    let released = holders(&[(0, "a"), (1, "a")]);
    let plan_b = plan(n, "b", &all, &released, &BTreeSet::new());
    assert_eq!(plan_b.acquire, [ShardId(2), ShardId(3)].into());
    // A shard validly held by a replica that is no longer a member is not taken before it
    // expires (it then stops being observed as held).
    let by_ghost = holders(&[(0, "a"), (1, "a"), (2, "ghost"), (3, "b")]);
    let plan_b = plan(n, "b", &all, &by_ghost, &[ShardId(3)].into());
    assert!(plan_b.acquire.is_empty(), "{plan_b:?}");
}

#[test]
fn plan_should_count_me_as_a_member_and_trust_my_own_holdings() {
    let n = shards(2);
    // Its own member Lease not seen yet: still takes its share, not everything.
    let plan_b = plan(n, "b", &members(&["a"]), &holders(&[(0, "a")]), &BTreeSet::new());
    assert_eq!(plan_b.acquire, [ShardId(1)].into());
    // A Lease naming me that I do not hold (a restart) counts as free for me to re-acquire.
    let plan_a = plan(
        n,
        "a",
        &members(&["a"]),
        &holders(&[(0, "a"), (1, "a")]),
        &[ShardId(0)].into(),
    );
    assert_eq!(plan_a.acquire, [ShardId(1)].into());
}

mod simulation;
