//! The egress rules as tables: each row an address, the policy it meets and the verdict.

use super::*;

fn nets(entries: &[&str]) -> Vec<String> {
    entries.iter().map(|entry| (*entry).to_owned()).collect()
}

fn policy(allowed: &[&str], denied: &[&str]) -> EgressPolicy {
    EgressPolicy::from_flags(&nets(allowed), &nets(denied)).expect("valid CIDRs")
}

fn at(address: &str) -> SocketAddr {
    address.parse().expect("a socket address")
}

fn net(cidr: &str) -> IpNet {
    cidr.parse().expect("a CIDR")
}

#[test]
fn the_default_policy_should_refuse_the_built_in_denials_and_allow_the_rest() {
    let policy = EgressPolicy::default();
    let table: &[(&str, Result<(), EgressRule>)] = &[
        ("203.0.113.7:443", Ok(())),
        ("10.96.0.10:443", Ok(())),
        ("[2001:db8::1]:443", Ok(())),
        ("[fd12::1]:443", Ok(())),
        ("127.0.0.1:443", Err(EgressRule::Loopback)),
        ("127.9.9.9:8200", Err(EgressRule::Loopback)),
        ("[::1]:443", Err(EgressRule::Loopback)),
        ("169.254.1.1:443", Err(EgressRule::LinkLocal)),
        ("[fe80::1]:443", Err(EgressRule::LinkLocal)),
        ("[febf::1]:443", Err(EgressRule::LinkLocal)),
        ("169.254.169.254:80", Err(EgressRule::CloudMetadata)),
        ("169.254.170.2:80", Err(EgressRule::CloudMetadata)),
        ("[fd00:ec2::254]:80", Err(EgressRule::CloudMetadata)),
        ("[fd00:ec2::23]:80", Err(EgressRule::CloudMetadata)),
        ("100.100.100.200:80", Err(EgressRule::CloudMetadata)),
        ("168.63.129.16:80", Err(EgressRule::CloudMetadata)),
        ("0.0.0.0:443", Err(EgressRule::Unspecified)),
        ("0.1.2.3:443", Err(EgressRule::Unspecified)),
        ("[::]:443", Err(EgressRule::Unspecified)),
        ("255.255.255.255:443", Err(EgressRule::Broadcast)),
        ("224.0.0.1:443", Err(EgressRule::Multicast)),
        ("[ff02::1]:443", Err(EgressRule::Multicast)),
    ];
    for (address, verdict) in table {
        assert_eq!(policy.check(at(address)), *verdict, "{address}");
    }
}

#[test]
fn an_ipv4_mapped_address_should_be_judged_as_the_ipv4_address_it_reaches() {
    let policy = policy(&["::ffff:203.0.113.0/120"], &["10.0.0.0/8"]);
    let table: &[(&str, Result<(), EgressRule>)] = &[
        ("[::ffff:169.254.169.254]:80", Err(EgressRule::CloudMetadata)),
        ("[::ffff:127.0.0.1]:443", Err(EgressRule::Loopback)),
        (
            "[::ffff:10.1.2.3]:443",
            Err(EgressRule::DeniedCidr(net("10.0.0.0/8"))),
        ),
        // The allowed entry was written mapped; it allows the IPv4 range.
        ("203.0.113.9:443", Ok(())),
        ("[::ffff:203.0.113.9]:443", Ok(())),
    ];
    for (address, verdict) in table {
        assert_eq!(policy.check(at(address)), *verdict, "{address}");
    }
}

#[test]
fn the_most_specific_flag_entry_should_decide_and_denied_should_win_a_tie() {
    let policy = policy(
        &["127.0.0.1/32", "10.96.7.7/32", "192.168.0.0/16", "172.16.0.0/12"],
        &["10.0.0.0/8", "192.168.1.0/24", "172.16.0.0/12", "198.51.100.0/24"],
    );
    let table: &[(&str, Result<(), EgressRule>)] = &[
        // Allowed over a built-in denial.
        ("127.0.0.1:8200", Ok(())),
        ("127.0.0.2:8200", Err(EgressRule::Loopback)),
        // An in-cluster FerrVault inside a denied cluster range.
        ("10.96.7.7:443", Ok(())),
        ("10.96.7.8:443", Err(EgressRule::DeniedCidr(net("10.0.0.0/8")))),
        // A denied hole in an allowed range.
        ("192.168.2.1:443", Ok(())),
        (
            "192.168.1.1:443",
            Err(EgressRule::DeniedCidr(net("192.168.1.0/24"))),
        ),
        // Same prefix on both sides: denied.
        (
            "172.16.5.5:443",
            Err(EgressRule::DeniedCidr(net("172.16.0.0/12"))),
        ),
        // Denied without any built-in reason.
        (
            "198.51.100.1:443",
            Err(EgressRule::DeniedCidr(net("198.51.100.0/24"))),
        ),
        // Untouched by the flags.
        ("203.0.113.7:443", Ok(())),
        ("169.254.169.254:80", Err(EgressRule::CloudMetadata)),
    ];
    for (address, verdict) in table {
        assert_eq!(policy.check(at(address)), *verdict, "{address}");
    }
}

#[test]
fn the_operators_own_servers_and_api_server_should_be_refused_whatever_the_flags_allow() {
    let own: Vec<IpAddr> = ["10.0.3.4", "127.0.0.1", "fd12::4"]
        .iter()
        .map(|ip| ip.parse().unwrap())
        .collect();
    let policy = policy(&["0.0.0.0/0", "::/0"], &[])
        .with_api_server([at("10.96.0.1:443"), at("127.0.0.3:6443")])
        .with_own(
            &own,
            &[at("[::]:8080"), at("127.0.0.1:8082"), at("10.0.3.4:8081")],
        );
    let table: &[(&str, Result<(), EgressRule>)] = &[
        // Every own address reaches a server bound to the unspecified address.
        ("10.0.3.4:8080", Err(EgressRule::OwnServer)),
        ("127.0.0.1:8080", Err(EgressRule::OwnServer)),
        ("127.5.5.5:8080", Err(EgressRule::OwnServer)),
        ("[fd12::4]:8080", Err(EgressRule::OwnServer)),
        ("[::ffff:10.0.3.4]:8080", Err(EgressRule::OwnServer)),
        ("0.0.0.0:8082", Err(EgressRule::OwnServer)),
        // A server bound to one address is reached there only.
        ("127.0.0.1:8082", Err(EgressRule::OwnServer)),
        ("127.0.0.2:8082", Ok(())),
        ("10.0.3.4:8081", Err(EgressRule::OwnServer)),
        ("10.0.3.5:8080", Ok(())),
        ("10.0.3.4:443", Ok(())),
        // The API server where the operator reaches it.
        ("10.96.0.1:443", Err(EgressRule::ApiServer)),
        ("127.0.0.3:6443", Err(EgressRule::ApiServer)),
        // Its address on another port is a built-in denial, which the flags here allow.
        ("10.96.0.1:8443", Ok(())),
    ];
    for (address, verdict) in table {
        assert_eq!(policy.check(at(address)), *verdict, "{address}");
    }
}

#[test]
fn the_operators_addresses_should_be_built_in_denials_the_allowed_flag_can_lift() {
    let own: Vec<IpAddr> = vec!["10.0.3.4".parse().unwrap()];
    let facts = |policy: EgressPolicy| {
        policy
            .with_api_server([at("10.96.0.1:443")])
            .with_own(&own, &[at("[::]:8080")])
    };
    let strict = facts(EgressPolicy::default());
    assert_eq!(strict.check(at("10.0.3.4:9999")), Err(EgressRule::OwnAddress));
    assert_eq!(
        strict.check(at("10.96.0.1:8443")),
        Err(EgressRule::ApiServerAddress)
    );
    let sidecar = facts(policy(&["10.0.3.4/32"], &[]));
    assert_eq!(sidecar.check(at("10.0.3.4:9999")), Ok(()));
    assert_eq!(
        sidecar.check(at("10.0.3.4:8080")),
        Err(EgressRule::OwnServer),
        "still never its own server"
    );
}

#[test]
fn flag_entries_should_parse_as_cidrs_or_addresses_and_name_a_bad_one() {
    let parsed = parse_cidrs(
        "--ferrvault-allowed-cidrs",
        &nets(&[
            " 10.1.2.3/8",
            "",
            "203.0.113.7",
            "fd00::/8",
            "::ffff:192.0.2.0/120",
        ]),
    )
    .unwrap();
    assert_eq!(
        parsed,
        [
            net("10.0.0.0/8"),
            net("203.0.113.7/32"),
            net("fd00::/8"),
            net("192.0.2.0/24")
        ]
    );
    for bad in ["10.0.0.0/33", "example.com", "10.0.0", "1.2.3.4/x"] {
        let error = parse_cidrs("--ferrvault-denied-cidrs", &nets(&[bad])).unwrap_err();
        assert!(
            error.contains("--ferrvault-denied-cidrs") && error.contains(bad),
            "{error}"
        );
    }
}

#[test]
fn a_refusal_should_name_the_rule_and_the_address_and_say_how_to_allow_what_can_be() {
    let refusal = EgressRefusal {
        host: Some("metadata.google.internal".into()),
        address: at("169.254.169.254:80"),
        rule: EgressRule::CloudMetadata,
        others: 1,
    };
    let text = refusal.to_string();
    for fragment in [
        "metadata.google.internal resolves to 169.254.169.254:80",
        "and 1 more",
        "a cloud metadata address",
        "no connection was made",
        "--ferrvault-allowed-cidrs",
    ] {
        assert!(text.contains(fragment), "{fragment:?} in {text}");
    }
    let own = EgressRefusal {
        host: None,
        address: at("127.0.0.1:8080"),
        rule: EgressRule::OwnServer,
        others: 0,
    }
    .to_string();
    assert!(
        own.contains("address 127.0.0.1:8080") && own.contains("own servers"),
        "{own}"
    );
    assert!(
        !own.contains("--ferrvault-allowed-cidrs"),
        "cannot be allowed: {own}"
    );
}
