//! client-go's REST client metrics, as controller-runtime registers them
//! (`pkg/metrics/client_go_adapter.go`): `rest_client_requests_total{code,method,host}` for every
//! request the kube client sends, and `rest_client_request_duration_seconds{verb,host}` (opt-in
//! there, always on here), recorded by a tower layer on the kube client's service stack.
//!
//! # Guarantees
//! - `code` is the HTTP status (`200`, `409`, …) or `<error>` when no response came, as client-go
//!   reports transport errors; `host` is the API server's `host:port`: bounded labels, never a
//!   path, an object name or a header.
//! - A watch is counted when its response headers arrive, not when the stream ends.
//! - The families are process-wide, like client-go's: every kube client built with
//!   [`RestClientMetrics::layer`] adds to the same series.

use std::{
    sync::LazyLock,
    task::{Context, Poll},
};

use futures::future::BoxFuture;
use http::{Request, Response};
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, histogram::Histogram},
    registry::Registry,
};
use tower_layer::Layer;
use tower_service::Service;

/// client-go's latency buckets (5ms … 60s).
const LATENCY_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

/// Labels of `rest_client_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    code: String,
    host: String,
    method: String,
}

/// Labels of `rest_client_request_duration_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    host: String,
    verb: String,
}

/// The REST client families. Cheap to clone (clones share the series).
#[derive(Clone, Debug)]
pub(crate) struct RestClientMetrics {
    requests: Family<RequestLabels, Counter>,
    latency: Family<LatencyLabels, Histogram, fn() -> Histogram>,
}

static PROCESS_WIDE: LazyLock<RestClientMetrics> = LazyLock::new(RestClientMetrics::new);

impl RestClientMetrics {
    fn new() -> Self {
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS)),
        }
    }

    /// The process-wide families (client-go keeps them global too).
    pub(crate) fn process_wide() -> &'static Self {
        &PROCESS_WIDE
    }

    /// Registers both families in `registry`.
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            self.requests.clone(),
        );
        registry.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb and host.",
            self.latency.clone(),
        );
    }

    /// A layer recording the requests sent to the API server at `host` (`host:port`).
    pub(crate) fn layer(&self, host: impl Into<String>) -> RestClientMetricsLayer {
        RestClientMetricsLayer {
            metrics: self.clone(),
            host: host.into(),
        }
    }

    fn record(&self, host: &str, method: &str, code: String, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                code,
                host: host.to_owned(),
                method: method.to_owned(),
            })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels {
                host: host.to_owned(),
                verb: method.to_owned(),
            })
            .observe(seconds);
    }
}

/// The `host` label of a kube client: its cluster URL's `host:port`, as client-go's base URL.
pub(crate) fn host_label(config: &kube::Config) -> String {
    config
        .cluster_url
        .authority()
        .map_or_else(|| "none".to_owned(), |authority| authority.as_str().to_owned())
}

/// See [`RestClientMetrics::layer`].
#[derive(Clone, Debug)]
pub(crate) struct RestClientMetricsLayer {
    metrics: RestClientMetrics,
    host: String,
}

impl<S> Layer<S> for RestClientMetricsLayer {
    type Service = RestClientMetricsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RestClientMetricsService {
            inner,
            metrics: self.metrics.clone(),
            host: self.host.clone(),
        }
    }
}

/// The service [`RestClientMetricsLayer`] wraps around the kube client's stack.
#[derive(Clone, Debug)]
pub(crate) struct RestClientMetricsService<S> {
    inner: S,
    metrics: RestClientMetrics,
    host: String,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for RestClientMetricsService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let method = request.method().as_str().to_owned();
        let started = tokio::time::Instant::now();
        let response = self.inner.call(request);
        let (metrics, host) = (self.metrics.clone(), self.host.clone());
        Box::pin(async move {
            let result = response.await;
            let code = match &result {
                Ok(response) => response.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics.record(&host, &method, code, started.elapsed().as_secs_f64());
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use std::future::Ready;

    use http::StatusCode;

    use super::*;

    /// Answers each request with the status its path names (`/409` → 409), `/fail` with an error.
    #[derive(Clone)]
    struct StatusFromPath;

    impl Service<Request<()>> for StatusFromPath {
        type Response = Response<()>;
        type Error = &'static str;
        type Future = Ready<Result<Response<()>, &'static str>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<()>) -> Self::Future {
            let path = request.uri().path().trim_start_matches('/').to_owned();
            std::future::ready(match path.parse::<u16>() {
                Ok(code) => Ok(Response::builder()
                    .status(StatusCode::from_u16(code).expect("a status"))
                    .body(())
                    .expect("a response")),
                Err(_) => Err("connection refused"),
            })
        }
    }

    #[tokio::test]
    async fn every_request_should_be_counted_by_code_method_and_host_and_timed_by_verb() {
        let metrics = RestClientMetrics::new();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let mut service = metrics.layer("10.96.0.1:443").layer(StatusFromPath);
        for (method, path) in [
            ("GET", "/200"),
            ("GET", "/200"),
            ("PATCH", "/409"),
            ("PUT", "/fail"),
        ] {
            let request = Request::builder()
                .method(method)
                .uri(path)
                .body(())
                .expect("request");
            let _ = service.call(request).await;
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        for series in [
            r#"rest_client_requests_total{code="200",host="10.96.0.1:443",method="GET"} 2"#,
            r#"rest_client_requests_total{code="409",host="10.96.0.1:443",method="PATCH"} 1"#,
            r#"rest_client_requests_total{code="<error>",host="10.96.0.1:443",method="PUT"} 1"#,
            r#"rest_client_request_duration_seconds_count{host="10.96.0.1:443",verb="GET"} 2"#,
            r#"rest_client_request_duration_seconds_bucket{le="60.0",host="10.96.0.1:443",verb="PUT"} 1"#,
        ] {
            assert!(text.contains(series), "{series} missing:\n{text}");
        }
    }
}
