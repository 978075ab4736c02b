//! `/healthz` and `/readyz` answered as controller-runtime's `healthz.Handler` answers them
//! (`pkg/healthz/healthz.go`), with our reasons where it writes "reason withheld":
//!
//! - `/healthz`: 200 `ok`, or 500 listing every check (`[+]name ok: why`, `[-]name failed: why`)
//!   and `healthz check failed`; `?verbose` lists them on success too, ending `healthz check
//!   passed`; `?exclude=<check>` (repeatable) skips a check (`[+]name excluded: ok`) and warns
//!   about names that match none.
//! - `/healthz/<check>`: that check alone: 200 `ok`, or 500 `internal server error: why`;
//!   404 for an unknown name.
//!
//! The Go operator's check names answer too: `healthz` and `readyz` (pings) and
//! `reconcile-progress` (our `progress`), so probes and scripts written for it keep working.
//!
//! Pure: a report, a sub-path and a query in, a status and a body out.

use controller_actors::{Check, ProbeReport};
use http::StatusCode;

/// What the probe answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// 200, 404 or 500.
    pub status: StatusCode,
    /// The text body.
    pub body: String,
}

/// The Go operator's check names and the check each stands for (`None`: a ping, always ok).
const GO_NAMES: [(&str, Option<&str>); 3] = [
    ("healthz", None),
    ("readyz", None),
    ("reconcile-progress", Some("progress")),
];

/// Answers a request for `sub_path` (what follows `/healthz` or `/readyz`: empty or
/// `<check>`, slashes around it ignored) with raw `query`, from `report`.
pub fn answer(report: &ProbeReport, sub_path: &str, query: &str) -> Answer {
    match sub_path.trim_matches('/') {
        "" => aggregated(report, query),
        name => single(report, name),
    }
}

fn single(report: &ProbeReport, name: &str) -> Answer {
    let check = match GO_NAMES.iter().find(|(go, _)| *go == name) {
        Some((_, None)) => return ok(),
        Some((_, Some(ours))) => find(report, ours),
        None => find(report, name),
    };
    match check {
        None => Answer {
            status: StatusCode::NOT_FOUND,
            body: "404 page not found\n".to_owned(),
        },
        Some(check) if check.ok => ok(),
        Some(check) => Answer {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body: format!("internal server error: {}\n", check.detail),
        },
    }
}

fn aggregated(report: &ProbeReport, query: &str) -> Answer {
    let (verbose, mut unmatched) = parse_query(query);
    let mut checks: Vec<&Check> = report.checks.iter().collect();
    checks.sort_by_key(|check| check.name);
    let mut failed = false;
    let mut lines = Vec::new();
    for check in checks {
        let excluded = unmatched.iter().position(|name| excludes(name, check.name));
        if let Some(index) = excluded {
            unmatched.remove(index);
            lines.push(format!("[+]{} excluded: ok", check.name));
        } else if check.ok {
            lines.push(format!("[+]{} ok: {}", check.name, check.detail));
        } else {
            failed = true;
            lines.push(format!("[-]{} failed: {}", check.name, check.detail));
        }
    }
    let status = if failed {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    if !failed && !verbose {
        return Answer {
            status,
            body: "ok".to_owned(),
        };
    }
    let mut body = lines.join("\n");
    body.push('\n');
    if !unmatched.is_empty() {
        let quoted: Vec<String> = unmatched.iter().map(|name| format!("{name:?}")).collect();
        body.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            quoted.join(",")
        ));
    }
    body.push_str(if failed {
        "healthz check failed\n"
    } else {
        "healthz check passed\n"
    });
    Answer { status, body }
}

/// Whether `?exclude=<name>` excludes our check `ours` (by its name or its Go name).
fn excludes(name: &str, ours: &str) -> bool {
    name == ours
        || GO_NAMES
            .iter()
            .any(|(go, check)| *go == name && *check == Some(ours))
}

fn find<'a>(report: &'a ProbeReport, name: &str) -> Option<&'a Check> {
    report.checks.iter().find(|check| check.name == name)
}

fn ok() -> Answer {
    Answer {
        status: StatusCode::OK,
        body: "ok".to_owned(),
    }
}

/// `verbose` present (any value, as Go's `Query()["verbose"]`), and every `exclude` value.
fn parse_query(query: &str) -> (bool, Vec<String>) {
    let mut verbose = false;
    let mut excluded = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match decode(key).as_str() {
            "verbose" => verbose = true,
            "exclude" => excluded.push(decode(value)),
            _ => {}
        }
    }
    (verbose, excluded)
}

fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &'static str, ok: bool, detail: &str) -> Check {
        Check {
            name,
            ok,
            detail: detail.to_owned(),
        }
    }

    fn report(checks: Vec<Check>) -> ProbeReport {
        ProbeReport {
            ok: checks.iter().all(|c| c.ok),
            body: String::new(),
            checks,
        }
    }

    #[test]
    fn a_passing_probe_should_answer_ok_and_list_its_checks_only_when_verbose() {
        let passing = report(vec![
            check("workers", true, "none stuck"),
            check("escalation", true, "none"),
        ]);
        assert_eq!(answer(&passing, "", ""), ok());
        assert_eq!(
            answer(&passing, "/", "verbose"),
            Answer {
                status: StatusCode::OK,
                body: "[+]escalation ok: none\n[+]workers ok: none stuck\nhealthz check passed\n".to_owned(),
            }
        );
    }

    #[test]
    fn a_failing_probe_should_answer_500_with_every_check_and_its_reason() {
        let failing = report(vec![
            check("progress", false, "nothing completed for 16m"),
            check("workers", true, "ok"),
        ]);
        assert_eq!(
            answer(&failing, "", ""),
            Answer {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body:
                    "[-]progress failed: nothing completed for 16m\n[+]workers ok: ok\nhealthz check failed\n"
                        .to_owned(),
            }
        );
    }

    #[test]
    fn excluded_checks_should_not_fail_the_probe_and_unknown_ones_should_be_named() {
        let failing = report(vec![
            check("progress", false, "stalled"),
            check("workers", true, "ok"),
        ]);
        let excluded = answer(&failing, "", "exclude=progress&exclude=nope&verbose=1");
        assert_eq!(excluded.status, StatusCode::OK);
        assert_eq!(
            excluded.body,
            "[+]progress excluded: ok\n[+]workers ok: ok\nwarn: some health checks cannot be excluded: no matches \
             for \"nope\"\nhealthz check passed\n"
        );
        assert_eq!(
            answer(&failing, "", "exclude=reconcile-progress").status,
            StatusCode::OK,
            "the Go name of the check excludes it too"
        );
    }

    #[test]
    fn a_sub_path_should_answer_for_that_check_alone() {
        let failing = report(vec![
            check("progress", false, "stalled"),
            check("workers", true, "ok"),
        ]);
        assert_eq!(answer(&failing, "/workers", ""), ok());
        assert_eq!(
            answer(&failing, "/progress/", ""),
            Answer {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body: "internal server error: stalled\n".to_owned(),
            }
        );
        assert_eq!(
            answer(&failing, "/reconcile-progress", "").status,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(answer(&failing, "/healthz", ""), ok(), "the Go operator's ping");
        assert_eq!(answer(&failing, "/nope", "").status, StatusCode::NOT_FOUND);
    }
}
