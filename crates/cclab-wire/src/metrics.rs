//! Named metrics: how a component (a sender, its congestion control, loss
//! recovery and pacer, a link) publishes its state for time series.
//!
//! Each component lists what it can publish in a [`MetricDesc`] table (an
//! algorithm in its [`crate::Descriptor`]), so the simulator knows every
//! series a run will record before it runs and can check a scenario's
//! selection. At each sample the driver hands the component a [`Metrics`]
//! writer and the component calls [`Metrics::put`] for each value it has. The
//! writer forwards to a [`MetricSink`] that keeps only the selected names: a
//! component never knows what is recorded, and a new algorithm publishes a new
//! metric by listing it and putting it, without touching the driver.
//!
//! Names are `&'static str` and a part's prefix (`"cc."`) travels beside the
//! name rather than being joined to it, so publishing never allocates.

use serde::Serialize;

/// One metric a component can publish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MetricDesc {
    /// Name within its component (`cwnd`; a part's prefix is added by its owner).
    pub name: &'static str,
    /// Unit of the value (`segments`, `s`, `bytes`, `bit/s`, `bool`).
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// Where published values go; the driver's implementation keeps the selected ones.
pub trait MetricSink {
    /// The metric `prefix` + `name` has `value` now.
    fn record(&mut self, prefix: &'static str, name: &'static str, value: f64);
}

/// The writer a component publishes through.
pub struct Metrics<'a> {
    prefix: &'static str,
    sink: &'a mut dyn MetricSink,
}

impl<'a> Metrics<'a> {
    pub fn new(sink: &'a mut dyn MetricSink) -> Self {
        Self { prefix: "", sink }
    }

    /// Publishes one value under this writer's prefix.
    pub fn put(&mut self, name: &'static str, value: f64) {
        self.sink.record(self.prefix, name, value);
    }

    /// A writer for a part of this component: its names get `prefix`
    /// (`"cc."`). Prefixes do not nest: parts have no parts of their own.
    pub fn part(&mut self, prefix: &'static str) -> Metrics<'_> {
        Metrics { prefix, sink: &mut *self.sink }
    }
}

/// Whether `full` is `prefix` followed by `name`, without joining them.
pub fn is_named(full: &str, prefix: &str, name: &str) -> bool {
    full.len() == prefix.len() + name.len() && full.starts_with(prefix) && full.ends_with(name)
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
pub fn glob(pattern: &str, name: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else { return pattern == name };
    let Some(mut tail) = name.strip_prefix(first) else { return false };
    let mut pieces: Vec<&str> = rest.split('*').collect();
    let last = pieces.pop().unwrap_or("");
    for piece in pieces {
        match tail.find(piece) {
            Some(at) => tail = &tail[at + piece.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

/// A sink that keeps everything, with the full names (tests, and tools that
/// list what a component publishes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricLog(pub Vec<(String, f64)>);

impl MetricLog {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }
}

impl MetricSink for MetricLog {
    fn record(&mut self, prefix: &'static str, name: &'static str, value: f64) {
        self.0.push((format!("{prefix}{name}"), value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_runs_of_characters() {
        assert!(glob("cwnd", "cwnd"));
        assert!(!glob("cwnd", "cwnd2"));
        assert!(glob("cc.*", "cc.estimate"));
        assert!(!glob("cc.*", "recovery.pipe"));
        assert!(glob("*", "anything"));
        assert!(glob("*.rate", "pacing.rate"));
        assert!(glob("s*t*", "srtt"));
        assert!(!glob("a*a", "a"));
    }

    #[test]
    fn parts_publish_under_their_prefix() {
        let mut log = MetricLog::default();
        let mut m = Metrics::new(&mut log);
        m.put("cwnd", 10.0);
        m.part("cc.").put("estimate", 2.0);
        m.put("rtt", 1.0);
        let names: Vec<&str> = log.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["cwnd", "cc.estimate", "rtt"]);
        assert!(is_named("cc.estimate", "cc.", "estimate"));
        assert!(!is_named("cc.estimate", "", "estimate"));
    }
}
