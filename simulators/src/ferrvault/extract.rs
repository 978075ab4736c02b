//! The warp filters that take a request apart, shared by every route: the bearer token and a
//! bounded body.

use std::convert::Infallible;

use bytes::Bytes;
use warp::{Filter, Rejection};

use super::config::Redacted;

/// Largest request body accepted (requests are tiny JSON objects).
const MAX_REQUEST_BODY: u64 = 64 * 1024;

/// A request declared a body larger than [`MAX_REQUEST_BODY`].
#[derive(Debug)]
pub struct BodyTooLarge;

impl warp::reject::Reject for BodyTooLarge {}

/// The request body, refused with 413 when its declared length exceeds [`MAX_REQUEST_BODY`].
/// Unlike `warp::body::content_length_limit`, a chunked body (no `Content-Length`) is accepted, as a
/// real server would.
pub fn small_body() -> impl Filter<Extract = (Bytes,), Error = Rejection> + Clone {
    warp::header::optional::<u64>("content-length")
        .and_then(|length: Option<u64>| async move {
            match length {
                Some(length) if length > MAX_REQUEST_BODY => Err(warp::reject::custom(BodyTooLarge)),
                Some(_) | None => Ok(()),
            }
        })
        .untuple_one()
        .and(warp::body::bytes())
}

/// The bearer of `Authorization: Bearer <token>` (scheme case-insensitive), if any.
pub fn bearer() -> impl Filter<Extract = (Option<Redacted>,), Error = Infallible> + Clone {
    warp::header::optional::<String>("authorization")
        .or(warp::any().map(|| None))
        .unify()
        .map(|header: Option<String>| header.as_deref().and_then(parse_bearer))
}

fn parse_bearer(header: &str) -> Option<Redacted> {
    let (scheme, token) = header.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| Redacted::new(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bearer_should_accept_any_scheme_case_and_refuse_other_schemes() {
        assert_eq!(parse_bearer("Bearer fvsat_x"), Some(Redacted::new("fvsat_x")));
        assert_eq!(parse_bearer("bearer  fvsat_x "), Some(Redacted::new("fvsat_x")));
        assert_eq!(parse_bearer("Basic abc"), None);
        assert_eq!(parse_bearer("Bearer "), None);
    }
}
