//! Prometheus text metrics, hand-rolled: requests per route and status, a latency histogram per
//! route, and the documents in the index.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// One route's latency histogram.
#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Debug, Default)]
struct Inner {
    requests: BTreeMap<(String, String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
}

/// The counters, shared by every request.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Metrics {
    /// Counts one request.
    pub fn record(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        *inner
            .requests
            .entry((method.to_string(), route.to_string(), status))
            .or_default() += 1;
        let histogram = inner.latency.entry(route.to_string()).or_default();
        for (count, bound) in histogram.counts.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *count += 1;
            }
        }
        histogram.count += 1;
        histogram.sum += seconds;
    }

    /// The Prometheus text exposition of every metric; `documents` is the index size.
    pub fn render(&self, documents: usize) -> String {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        out.push_str(
            "# HELP neardup_http_requests_total HTTP requests by method, route and status.\n",
        );
        out.push_str("# TYPE neardup_http_requests_total counter\n");
        for ((method, route, status), count) in &inner.requests {
            let _ = writeln!(
                out,
                "neardup_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {count}"
            );
        }
        out.push_str("# HELP neardup_http_request_duration_seconds Request latency by route.\n");
        out.push_str("# TYPE neardup_http_request_duration_seconds histogram\n");
        for (route, h) in &inner.latency {
            for (count, bound) in h.counts.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        out.push_str(
            "# HELP neardup_index_documents Documents in this server's in-memory index.\n",
        );
        out.push_str("# TYPE neardup_index_documents gauge\n");
        let _ = writeln!(out, "neardup_index_documents {documents}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_buckets() {
        let metrics = Metrics::default();
        metrics.record("POST", "/v1/check", 200, Duration::from_millis(3));
        metrics.record("POST", "/v1/check", 200, Duration::from_millis(30));
        let text = metrics.render(7);
        assert!(text.contains(
            "neardup_http_requests_total{method=\"POST\",route=\"/v1/check\",status=\"200\"} 2"
        ));
        assert!(text.contains("route=\"/v1/check\",le=\"0.005\"} 1"));
        assert!(text.contains("route=\"/v1/check\",le=\"+Inf\"} 2"));
        assert!(text.contains("neardup_index_documents 7"));
    }
}
