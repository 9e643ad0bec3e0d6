//! What a link direction carries over time, as a scenario writes it: a
//! constant rate, a rate schedule, or a Mahimahi packet-delivery trace; and
//! a delay that may follow a schedule.
//!
//! ```toml
//! rate = "100Mbps"                                    # constant
//! rate = [["0s", "100Mbps"], ["10s", "20Mbps"]]       # steps: each value from its time on
//! rate = { cycle = [["1s", "100Mbps"], ["500ms", "0bps"]] }   # held in turn, repeated (on/off)
//! trace = "traces/cellular.trace"                     # delivery opportunities (Mahimahi)
//! delay = [["0s", "10ms"], ["5s", "50ms"]]            # delay schedules take the same forms
//! ```

use crate::error::ScenarioError;
use crate::reader::Section;
use crate::units::MAX_LINK_DELAY;
use cclab_core::delivery_trace::DeliveryTrace;
use cclab_core::schedule::{Schedule, ScheduleError};
use cclab_wire::Time;
use serde::{Serialize, Serializer};
use std::path::Path;
use std::sync::Arc;
use toml::Value;

/// What one direction of a link can carry over time.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Capacity {
    /// A constant rate, bit/s.
    Rate(u64),
    /// A rate in bit/s that changes in steps or cycles.
    Schedule(Schedule),
    /// A Mahimahi trace's delivery opportunities.
    Trace(TraceFile),
}

impl Capacity {
    /// Whether it is one rate for ever.
    pub fn is_constant(&self) -> bool {
        matches!(self, Capacity::Rate(_))
    }

    /// The rate everything that needs one rate is sized from when nothing
    /// else is given: the rate itself, a schedule's highest, a trace's mean.
    pub fn nominal_bps(&self) -> u64 {
        match self {
            Capacity::Rate(r) => *r,
            Capacity::Schedule(s) => s.range().1,
            Capacity::Trace(t) => t.trace.mean_rate_bps().round() as u64,
        }
    }

    /// The highest rate it can reach, for memory estimates: a trace's
    /// busiest millisecond.
    pub fn peak_bps(&self) -> u64 {
        match self {
            Capacity::Trace(t) => t.trace.peak_rate_bps(),
            other => other.nominal_bps(),
        }
    }
}

/// A trace file as read: the path as written, a digest of its text (so that a
/// sweep's cache sees an edited file as a new scenario), and the trace.
#[derive(Clone, Debug, Serialize)]
pub struct TraceFile {
    pub path: String,
    #[serde(serialize_with = "as_hex")]
    pub digest: u64,
    pub mean_rate_bps: f64,
    #[serde(skip)]
    pub trace: Arc<DeliveryTrace>,
}

impl PartialEq for TraceFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.digest == other.digest
    }
}

fn as_hex<S: Serializer>(digest: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{digest:016x}"))
}

impl TraceFile {
    /// Reads and checks the trace at `path`.
    pub fn read(path: &str) -> Result<Self, String> {
        let text = std::fs::read(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("no such trace file: {path}"),
            _ => format!("cannot read {path}: {e}"),
        })?;
        let text = String::from_utf8(text).map_err(|_| format!("{path} is not a text file"))?;
        let trace = DeliveryTrace::parse(&text).map_err(|e| format!("{path}: {e}"))?;
        Ok(Self {
            path: path.to_string(),
            digest: cclab_core::rng::fnv1a64(text.as_bytes()),
            mean_rate_bps: trace.mean_rate_bps(),
            trace: Arc::new(trace),
        })
    }
}

/// `key` as a schedule's step `[time, value]` pairs or a `{ cycle = [[duration, value], ...] }`
/// table, each value read by `value`; `None` if `key` holds a plain string (the caller reads it).
fn schedule(
    s: &mut Section,
    key: &'static str,
    value: fn(&str) -> Result<u64, String>,
    example: &str,
) -> Result<Option<Schedule>, ScenarioError> {
    let path = s.key_path(key);
    let pairs = |items: &[Value], what: &str| -> Result<Vec<(Time, u64)>, ScenarioError> {
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = |message: String| ScenarioError::at(format!("{path}[{i}]"), message);
                match item.as_array().map(Vec::as_slice) {
                    Some([Value::String(t), Value::String(v)]) => {
                        let t = cclab_wire::units::duration(t).map_err(at)?;
                        let v = value(v).map_err(at)?;
                        Ok((t, v))
                    }
                    _ => Err(at(format!("expected a pair [{what}, value] of strings, like {example}"))),
                }
            })
            .collect()
    };
    let built = match s.get(key) {
        Some(Value::Array(items)) => Schedule::steps(pairs(items, "time")?),
        Some(Value::Table(t)) => {
            let mut cycle = Section::new(path.clone(), t);
            let entries = match cycle.get("cycle") {
                Some(Value::Array(items)) => pairs(items, "duration")?,
                Some(_) => return Err(cycle.error("cycle", "expected an array of [duration, value] pairs")),
                None => return Err(cycle.error("cycle", "is required (a schedule table is a cycle)")),
            };
            cycle.finish()?;
            Schedule::cycle(&entries)
        }
        _ => return Ok(None),
    };
    built.map(Some).map_err(|e: ScheduleError| ScenarioError::at(path, format!("the schedule {e}")))
}

/// A rate that may be zero: an off period of a schedule.
fn rate_or_zero(text: &str) -> Result<u64, String> {
    match cclab_wire::units::split_number(text) {
        Ok((0.0, _)) => Ok(0),
        _ => cclab_wire::units::rate(text),
    }
}

/// `key` as a constant rate or a rate schedule; `None` if absent.
pub fn rate(s: &mut Section, key: &'static str) -> Result<Option<Capacity>, ScenarioError> {
    let example = "[\"0s\", \"100Mbps\"]";
    if let Some(schedule) = schedule(s, key, rate_or_zero, example)? {
        if schedule.range().1 == 0 {
            return Err(s.error(key, "the schedule is zero throughout: the link would never carry a packet"));
        }
        return Ok(Some(Capacity::Schedule(schedule)));
    }
    Ok(s.rate(key)?.map(Capacity::Rate))
}

/// `key` as a trace file's path, relative to `base` if given (the scenario
/// file's directory) or else to the working directory; `None` if absent.
pub fn trace(
    s: &mut Section,
    key: &'static str,
    base: Option<&Path>,
) -> Result<Option<Capacity>, ScenarioError> {
    let Some(path) = s.string(key)? else { return Ok(None) };
    let path = match base {
        Some(dir) if Path::new(path).is_relative() => dir.join(path).display().to_string(),
        _ => path.to_string(),
    };
    TraceFile::read(&path).map(|t| Some(Capacity::Trace(t))).map_err(|m| s.error(key, m))
}

/// `key` as a constant delay (returned as a one-value schedule's value and
/// no schedule) or a delay schedule; `None` if absent.
pub fn delay(s: &mut Section, key: &'static str) -> Result<Option<(Time, Option<Schedule>)>, ScenarioError> {
    let delay = match schedule(s, key, cclab_wire::units::duration, "[\"0s\", \"10ms\"]")? {
        Some(schedule) => (schedule.value_at(0), Some(schedule)),
        None => match s.duration(key)? {
            Some(d) => (d, None),
            None => return Ok(None),
        },
    };
    let longest = delay.1.as_ref().map_or(delay.0, |schedule| schedule.range().1);
    if longest > MAX_LINK_DELAY {
        return Err(s.error(
            key,
            format!(
                "{} is above {}, the longest one-way delay a link may have (the Moon is 1.3 s away)",
                crate::units::fmt_time(longest),
                crate::units::fmt_time(MAX_LINK_DELAY)
            ),
        ));
    }
    Ok(Some(delay))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    fn read(text: &str, key: &'static str) -> Result<Option<Capacity>, ScenarioError> {
        let table: toml::Table = toml::from_str(text).expect("toml");
        let mut s = Section::new("link", &table);
        rate(&mut s, key)
    }

    #[test]
    fn rates_read_as_constants_steps_or_cycles() {
        assert_eq!(read("rate = \"10Mbps\"", "rate"), Ok(Some(Capacity::Rate(10_000_000))));
        let steps = read("rate = [[\"0s\", \"10Mbps\"], [\"2s\", \"1Mbps\"]]", "rate");
        let want = Schedule::steps(vec![(0, 10_000_000), (2_000_000_000, 1_000_000)]).expect("valid");
        assert_eq!(steps, Ok(Some(Capacity::Schedule(want))));
        let cycle = read("rate = { cycle = [[\"1ms\", \"8Mbps\"], [\"1ms\", \"0bps\"]] }", "rate");
        let want = Schedule::cycle(&[(millis(1), 8_000_000), (millis(1), 0)]).expect("valid");
        assert_eq!(cycle, Ok(Some(Capacity::Schedule(want))));
    }

    #[test]
    fn bad_schedules_name_the_key_and_the_step() {
        let message = |text: &str| read(text, "rate").err().map(|e| e.to_string());
        let back = message("rate = [[\"0s\", \"10Mbps\"], [\"2s\", \"1Mbps\"], [\"1s\", \"2Mbps\"]]");
        assert!(
            back.as_deref().is_some_and(|m| m.contains("link.rate") && m.contains("back in time")),
            "{back:?}"
        );
        let late = message("rate = [[\"1s\", \"10Mbps\"]]");
        assert!(late.as_deref().is_some_and(|m| m.contains("must start at 0s")), "{late:?}");
        let pair = message("rate = [[\"0s\", 5]]");
        assert!(pair.as_deref().is_some_and(|m| m.contains("link.rate[0]")), "{pair:?}");
        let unit = message("rate = [[\"0s\", \"10Mbs\"]]");
        assert!(unit.as_deref().is_some_and(|m| m.contains("link.rate[0]")), "{unit:?}");
        let dead = message("rate = [[\"0s\", \"0bps\"]]");
        assert!(dead.as_deref().is_some_and(|m| m.contains("never carry")), "{dead:?}");
        let cycle = message("rate = { cycle = [[\"0s\", \"1Mbps\"]] }");
        assert!(cycle.as_deref().is_some_and(|m| m.contains("lasts no time")), "{cycle:?}");
    }
}
