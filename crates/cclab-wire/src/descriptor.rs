//! Algorithm descriptors: the one place an algorithm states its name, role,
//! parameters (type, unit, default, allowed range, meaning), the source it
//! follows, and how to build it.
//!
//! Every algorithm file exports one [`Descriptor`]; a registry is a list of
//! them. The scenario validator checks a flow's parameters against the
//! descriptor and fills in its defaults, so a constructor receives a complete
//! [`Params`] and never invents a default or falls back silently. `cclab
//! algorithms` prints the same descriptors.

use crate::distribution::{Law, SizeDistribution};
use crate::metrics::MetricDesc;
use crate::time::Time;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// What part of a flow (or of the network) an algorithm plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// How much may be in flight (`cc`).
    CongestionControl,
    /// What to send after a loss (`recovery`).
    LossRecovery,
    /// When to send (`pacing`).
    Pacing,
    /// What a link's queue admits or marks (`queue`).
    QueueDiscipline,
    /// What the application offers (`app`).
    TrafficSource,
    /// A transport protocol (`protocol`).
    Protocol,
    /// How a host sizes its connections' send buffers (`send_buffer.policy`).
    SendBuffer,
}

impl Role {
    /// The scenario key that names an algorithm of this role.
    pub fn key(&self) -> &'static str {
        match self {
            Role::CongestionControl => "cc",
            Role::LossRecovery => "recovery",
            Role::Pacing => "pacing",
            Role::QueueDiscipline => "queue",
            Role::TrafficSource => "app",
            Role::Protocol => "protocol",
            Role::SendBuffer => "send_buffer",
        }
    }

    /// How messages name the role ("unknown congestion control \"x\"").
    pub fn title(&self) -> &'static str {
        match self {
            Role::CongestionControl => "congestion control",
            Role::LossRecovery => "loss recovery",
            Role::Pacing => "pacing",
            Role::QueueDiscipline => "queue discipline",
            Role::TrafficSource => "traffic source",
            Role::Protocol => "protocol",
            Role::SendBuffer => "send-buffer policy",
        }
    }
}

/// The type of a parameter's value, which also decides how a scenario writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamType {
    Bool,
    /// A number (`0.125`).
    Number,
    /// A whole number (`14`).
    Integer,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A bit rate with its unit (`"40Mbps"`); the range is in bit/s.
    Rate,
    /// A byte count with its unit (`"1000B"`); the range is in bytes.
    Size,
    /// A duration with its unit (`"500ms"`); the range is in seconds.
    Duration,
    /// Events per unit of time (`"50/s"`, `"3/min"`); the range is per second.
    PerSecond,
    /// A distribution of byte counts (`"pareto(mean=100KB, shape=1.2)"`); the range bounds its mean.
    SizeDistribution,
    /// A distribution of durations (`"exponential(mean=1s)"`); the range bounds its mean, in seconds.
    DurationDistribution,
    /// A distribution of whole counts (`"10"`, `"exponential(mean=10)"`); the range bounds its mean.
    CountDistribution,
}

impl ParamType {
    /// Whether `min`/`max` constrain values of this type.
    pub fn has_range(&self) -> bool {
        !matches!(self, ParamType::Bool | ParamType::Choice(_))
    }

    /// How the value is written, for messages and `cclab algorithms`.
    pub fn describe(&self) -> String {
        match self {
            ParamType::Bool => "true or false".into(),
            ParamType::Number => "a number".into(),
            ParamType::Integer => "a whole number".into(),
            ParamType::Choice(words) => format!("one of {}", words.join(", ")),
            ParamType::Rate => "a rate like \"10Mbps\"".into(),
            ParamType::Size => "a size like \"1000B\"".into(),
            ParamType::Duration => "a duration like \"500ms\"".into(),
            ParamType::PerSecond => "a frequency like \"50/s\"".into(),
            ParamType::SizeDistribution => {
                "a size or a distribution: \"100KB\", \"exponential(mean=100KB)\", \"pareto(mean=100KB, shape=1.2)\""
                    .into()
            }
            ParamType::DurationDistribution => {
                "a duration or a distribution: \"1s\", \"exponential(mean=1s)\", \"pareto2(mean=1s, shape=1.5)\"".into()
            }
            ParamType::CountDistribution => {
                "a count or a distribution: 10, \"exponential(mean=10)\", \"pareto2(mean=10, shape=1.5)\"".into()
            }
        }
    }
}

/// What a parameter is when the scenario does not set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamDefault {
    /// This value, as a scenario would write it.
    Value(&'static str),
    /// The scenario must set it.
    Required,
    /// It is simply absent (an optional feature left off).
    Absent,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parameter {
    pub name: &'static str,
    pub ty: ParamType,
    /// Unit of a plain number ("segments", "packets"); empty if none or if the
    /// type carries its own unit.
    pub unit: &'static str,
    /// Allowed range (inclusive) in the type's base unit; ignored for booleans and choices.
    pub min: f64,
    pub max: f64,
    pub default: ParamDefault,
    pub meaning: &'static str,
}

impl Parameter {
    /// Parses a value written as text (a choice, or a value with a unit); the
    /// range is checked by [`Parameter::check_range`].
    pub fn parse_text(&self, text: &str) -> Result<ParamValue, String> {
        use crate::units;
        match self.ty {
            ParamType::Choice(words) if words.contains(&text) => Ok(ParamValue::Text(text.to_string())),
            ParamType::Choice(words) => Err(format!("\"{text}\" is not one of {}", words.join(", "))),
            ParamType::Rate => units::rate(text).map(ParamValue::Rate),
            ParamType::Size => units::size(text).map(ParamValue::Size),
            ParamType::Duration => units::duration(text).map(ParamValue::Duration),
            ParamType::PerSecond => units::per_second(text).map(ParamValue::PerSecond),
            ParamType::SizeDistribution => units::size_distribution(text).map(ParamValue::Distribution),
            ParamType::DurationDistribution => units::duration_distribution(text).map(ParamValue::Durations),
            ParamType::CountDistribution => units::count_distribution(text).map(ParamValue::Counts),
            ParamType::Bool => match text {
                "true" => Ok(ParamValue::Bool(true)),
                "false" => Ok(ParamValue::Bool(false)),
                _ => Err(format!("expected true or false, found \"{text}\"")),
            },
            ParamType::Number | ParamType::Integer => match text.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(ParamValue::Number(x)),
                _ => Err(format!("expected {}, found \"{text}\"", self.ty.describe())),
            },
        }
    }

    /// The value in the range's base unit, for range checks.
    fn magnitude(value: &ParamValue) -> Option<f64> {
        match *value {
            ParamValue::Number(x) | ParamValue::PerSecond(x) => Some(x),
            ParamValue::Rate(r) => Some(r as f64),
            ParamValue::Size(b) => Some(b as f64),
            ParamValue::Duration(t) => Some(crate::time::to_secs_f64(t)),
            ParamValue::Distribution(d) => Some(d.mean()),
            ParamValue::Durations(d) | ParamValue::Counts(d) => Some(d.mean()),
            ParamValue::Bool(_) | ParamValue::Text(_) => None,
        }
    }

    /// An error message if `value` lies outside the allowed range (or is not
    /// whole where a whole number is expected).
    pub fn check_range(&self, value: &ParamValue) -> Result<(), String> {
        let Some(x) = Self::magnitude(value) else { return Ok(()) };
        if self.ty == ParamType::Integer && x.fract() != 0.0 {
            return Err(format!("{x} is not a whole number"));
        }
        if !(x >= self.min && x <= self.max) {
            let shown = match self.ty {
                ParamType::SizeDistribution => format!("a mean of {x} B"),
                ParamType::DurationDistribution => format!("a mean of {x} s"),
                ParamType::CountDistribution => format!("a mean of {x}"),
                ParamType::Rate => format!("{x} bit/s"),
                ParamType::Size => format!("{x} B"),
                ParamType::Duration => format!("{x} s"),
                ParamType::PerSecond => format!("{x}/s"),
                _ => x.to_string(),
            };
            return Err(format!("{shown} is out of range {}", self.range_text()));
        }
        Ok(())
    }

    /// The default as a checked value, if there is one.
    pub fn default_value(&self) -> Option<Result<ParamValue, String>> {
        let ParamDefault::Value(text) = self.default else { return None };
        Some(self.parse_text(text).and_then(|v| self.check_range(&v).map(|()| v)))
    }

    /// The allowed range as a user reads it, e.g. "[0, 1]" or "[1 B, 1e+09 B]".
    pub fn range_text(&self) -> String {
        let unit = match self.ty {
            ParamType::Rate => " bit/s",
            ParamType::Size => " B",
            ParamType::Duration => " s",
            ParamType::PerSecond => "/s",
            ParamType::SizeDistribution => " B mean",
            ParamType::DurationDistribution => " s mean",
            _ if self.unit.is_empty() => "",
            _ => return format!("[{}, {}] {}", self.min, self.max, self.unit),
        };
        format!("[{}{unit}, {}{unit}]", self.min, self.max)
    }
}

/// A checked parameter value. Serialised in base units: rates in bit/s,
/// sizes in bytes, durations in seconds, frequencies per second.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Number(f64),
    Text(String),
    /// Bits per second.
    Rate(u64),
    /// Bytes.
    Size(u64),
    Duration(#[serde(serialize_with = "seconds")] Time),
    /// Events per second.
    PerSecond(f64),
    Distribution(SizeDistribution),
    /// Seconds.
    Durations(Law),
    Counts(Law),
}

fn seconds<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(crate::time::to_secs_f64(*t))
}

/// A parameter a constructor asked for is absent or of another type: the
/// validator and the descriptor disagree, a bug this error names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub name: String,
    pub problem: &'static str,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parameter \"{}\": {}", self.name, self.problem)
    }
}

impl std::error::Error for ParamError {}

/// Every parameter of one algorithm, defaults filled in by the validator.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Params(BTreeMap<String, ParamValue>);

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, name: impl Into<String>, value: ParamValue) {
        self.0.insert(name.into(), value);
    }

    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.0.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &ParamValue)> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn value(&self, name: &str) -> Result<&ParamValue, ParamError> {
        self.0
            .get(name)
            .ok_or(ParamError { name: name.into(), problem: "missing (not resolved by the validator)" })
    }

    fn wrong(name: &str) -> ParamError {
        ParamError { name: name.into(), problem: "has a value of another type than its descriptor says" }
    }

    pub fn bool(&self, name: &str) -> Result<bool, ParamError> {
        match self.value(name)? {
            ParamValue::Bool(b) => Ok(*b),
            _ => Err(Self::wrong(name)),
        }
    }

    pub fn number(&self, name: &str) -> Result<f64, ParamError> {
        match self.value(name)? {
            ParamValue::Number(x) => Ok(*x),
            _ => Err(Self::wrong(name)),
        }
    }

    pub fn choice(&self, name: &str) -> Result<&str, ParamError> {
        match self.value(name)? {
            ParamValue::Text(t) => Ok(t),
            _ => Err(Self::wrong(name)),
        }
    }

    pub fn rate(&self, name: &str) -> Result<u64, ParamError> {
        match self.value(name)? {
            ParamValue::Rate(r) => Ok(*r),
            _ => Err(Self::wrong(name)),
        }
    }

    pub fn size(&self, name: &str) -> Result<u64, ParamError> {
        match self.value(name)? {
            ParamValue::Size(b) => Ok(*b),
            _ => Err(Self::wrong(name)),
        }
    }

    /// An optional duration: absent when the descriptor has no default and the scenario gave none.
    pub fn duration(&self, name: &str) -> Result<Option<Time>, ParamError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(ParamValue::Duration(t)) => Ok(Some(*t)),
            Some(_) => Err(Self::wrong(name)),
        }
    }

    pub fn per_second(&self, name: &str) -> Result<f64, ParamError> {
        match self.value(name)? {
            ParamValue::PerSecond(x) => Ok(*x),
            _ => Err(Self::wrong(name)),
        }
    }

    pub fn distribution(&self, name: &str) -> Result<SizeDistribution, ParamError> {
        match self.value(name)? {
            ParamValue::Distribution(d) => Ok(*d),
            _ => Err(Self::wrong(name)),
        }
    }

    /// A distribution of durations, in seconds.
    pub fn durations(&self, name: &str) -> Result<Law, ParamError> {
        match self.value(name)? {
            ParamValue::Durations(d) => Ok(*d),
            _ => Err(Self::wrong(name)),
        }
    }

    pub fn counts(&self, name: &str) -> Result<Law, ParamError> {
        match self.value(name)? {
            ParamValue::Counts(d) => Ok(*d),
            _ => Err(Self::wrong(name)),
        }
    }

    /// An optional number: absent when the descriptor has no default and the scenario gave none.
    pub fn optional_number(&self, name: &str) -> Result<Option<f64>, ParamError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(ParamValue::Number(x)) => Ok(Some(*x)),
            Some(_) => Err(Self::wrong(name)),
        }
    }

    pub fn optional_rate(&self, name: &str) -> Result<Option<u64>, ParamError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(ParamValue::Rate(r)) => Ok(Some(*r)),
            Some(_) => Err(Self::wrong(name)),
        }
    }

    pub fn optional_per_second(&self, name: &str) -> Result<Option<f64>, ParamError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(ParamValue::PerSecond(x)) => Ok(Some(*x)),
            Some(_) => Err(Self::wrong(name)),
        }
    }
}

/// One algorithm: what it is, where it comes from, what it takes, how to build it.
/// `B` is the role's constructor (a congestion control's differs from a queue's).
#[derive(Clone, Copy, Debug)]
pub struct Descriptor<B: 'static> {
    pub name: &'static str,
    pub role: Role,
    /// One line: what the algorithm does.
    pub summary: &'static str,
    /// The source it follows: RFC section, paper, Linux file.
    pub source: &'static str,
    pub parameters: &'static [Parameter],
    /// What the algorithm publishes for time series (without its role's prefix).
    pub metrics: &'static [MetricDesc],
    pub build: B,
}

/// A descriptor without its constructor, so descriptors of every role can be
/// listed and checked together.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    pub name: &'static str,
    pub role: Role,
    pub summary: &'static str,
    pub source: &'static str,
    pub parameters: &'static [Parameter],
    pub metrics: &'static [MetricDesc],
}

impl<B> Descriptor<B> {
    pub fn info(&self) -> Info {
        Info {
            name: self.name,
            role: self.role,
            summary: self.summary,
            source: self.source,
            parameters: self.parameters,
            metrics: self.metrics,
        }
    }
}

/// Declares a role's algorithm modules, one file each, and lists their
/// descriptors in the order given: adding an algorithm is a new file `NAME.rs`
/// beside the role's trait, exporting `pub const DESCRIPTOR`, and `NAME` in
/// the role's list. The module list and the descriptor list are one list, so
/// they cannot disagree.
///
/// ```ignore
/// cclab_wire::algorithms! {
///     /// The congestion controls a flow can name (`cc = NAME`).
///     pub const CONGESTION_CONTROLS: CcDescriptor = [reno, cubic];
/// }
/// ```
///
/// `cargo fmt` does not open modules declared inside a macro: format an
/// algorithm file with `rustfmt --edition 2021 FILE` (or `cargo fmt -- FILE`).
#[macro_export]
macro_rules! algorithms {
    ($(#[$attr:meta])* $vis:vis const $list:ident: $descriptor:ty = [$($module:ident),+ $(,)?];) => {
        $(pub mod $module;)+
        $(#[$attr])*
        $vis const $list: &[$descriptor] = &[$($module::DESCRIPTOR),+];
    };
}

impl Info {
    pub fn parameter(&self, name: &str) -> Option<&'static Parameter> {
        self.parameters.iter().find(|p| p.name == name)
    }

    /// Every parameter at its default. Fails for a required parameter (one
    /// without a default) or a default its own descriptor does not allow.
    pub fn defaults(&self) -> Result<Params, ParamError> {
        let mut params = Params::new();
        for p in self.parameters {
            match (p.default, p.default_value()) {
                (_, Some(Ok(v))) => params.insert(p.name, v),
                (_, Some(Err(_))) => {
                    return Err(ParamError {
                        name: p.name.into(),
                        problem: "has a default outside its range",
                    })
                }
                (ParamDefault::Required, None) => {
                    return Err(ParamError { name: p.name.into(), problem: "is required" })
                }
                (_, None) => {}
            }
        }
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_getters_name_the_parameter_on_a_mismatch() {
        let mut p = Params::new();
        p.insert("beta", ParamValue::Number(0.5));
        assert_eq!(p.number("beta"), Ok(0.5));
        assert_eq!(p.bool("beta").unwrap_err().name, "beta");
        assert!(p.number("gamma").unwrap_err().to_string().contains("gamma"));
    }
}
