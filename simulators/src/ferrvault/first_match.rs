//! warp's `or` chain over many routes, with each step boxed.

use warp::{Filter, filters::BoxedFilter};

/// The answer of the first of `routes` that matches (warp's `a.or(b).unify()`, rejections combined
/// as warp combines them). Each step is boxed: an unboxed chain of fourteen routes nests into one
/// type that took the compiler 30 s of the simulator's 50 s build to check and instantiate.
pub fn first_match<R: Send + 'static>(
    first: BoxedFilter<(R,)>,
    rest: impl IntoIterator<Item = BoxedFilter<(R,)>>,
) -> BoxedFilter<(R,)> {
    rest.into_iter()
        .fold(first, |matched, route| matched.or(route).unify().boxed())
}
