//! The algorithms a scenario can name, with their parameters and sources.
//! Scenario validation, `cclab algorithms` and the factories below read this one table.
//!
//! A scenario sets parameters per flow group (`cc_params = { ... }`,
//! `recovery_params = { ... }`); the scenario reader checks names and values
//! against [`Parameter::kind`], and the factories read them with [`Params`].

use crate::cc::{reno::Reno as RenoCc, CongestionControl};
use crate::tcp::recovery::newreno::{FullAckWindow, NewReno};
use crate::tcp::recovery::{reno::Reno, sack::Sack, tahoe::Tahoe, LossRecovery};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    CongestionControl,
    LossRecovery,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    Bool,
    /// A number in `[min, max]`.
    Number {
        min: f64,
        max: f64,
    },
    /// One of these words.
    Choice(&'static [&'static str]),
}

#[derive(Clone, Copy, Debug)]
pub struct Parameter {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: &'static str,
    pub meaning: &'static str,
}

/// A checked parameter value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Number(f64),
    Text(String),
}

/// Parameter values by name; absent ones take the documented default.
pub type Params = BTreeMap<String, ParamValue>;

fn bool_param(params: &Params, name: &str, default: bool) -> bool {
    match params.get(name) {
        Some(ParamValue::Bool(b)) => *b,
        _ => default,
    }
}

fn text_param<'a>(params: &'a Params, name: &str, default: &'a str) -> &'a str {
    match params.get(name) {
        Some(ParamValue::Text(t)) => t,
        _ => default,
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Algorithm {
    pub name: &'static str,
    pub role: Role,
    pub summary: &'static str,
    pub source: &'static str,
    pub parameters: &'static [Parameter],
}

pub const ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "reno",
        role: Role::CongestionControl,
        summary: "AIMD: slow start, +1 segment per RTT, ssthresh = max(FlightSize/2, 2) on loss",
        source: "RFC 5681 §3.1, eq. (3) and (4)",
        parameters: &[],
    },
    Algorithm {
        name: "tahoe",
        role: Role::LossRecovery,
        summary: "fast retransmit then slow start from cwnd = 1 (go-back-N), no fast recovery",
        source: "Jacobson, SIGCOMM 1988; RFC 5681 without §3.2 fast recovery; ns-2 Tahoe with bug_fix_",
        parameters: &[],
    },
    Algorithm {
        name: "reno",
        role: Role::LossRecovery,
        summary: "fast retransmit and fast recovery with window inflation; any new ACK ends recovery",
        source: "RFC 5681 §3.2",
        parameters: &[],
    },
    Algorithm {
        name: "newreno",
        role: Role::LossRecovery,
        summary: "fast recovery that stays until `recover` is acknowledged, retransmitting on partial ACKs",
        source: "RFC 6582 §3.2 (Impatient timer, §4)",
        parameters: &[Parameter {
            name: "full_ack",
            kind: ParamKind::Choice(&["flight", "ssthresh"]),
            default: "flight",
            meaning: "cwnd on the full ACK: min(ssthresh, max(FlightSize, 1) + 1) (RFC 6582 option 1) or ssthresh \
                      (option 2)",
        }],
    },
    Algorithm {
        name: "sack",
        role: Role::LossRecovery,
        summary: "conservative SACK recovery: scoreboard, IsLost, pipe, NextSeg rules 1-4 with rescue retransmission",
        source: "RFC 6675 §4-5; SACK option RFC 2018",
        parameters: &[
            Parameter {
                name: "rule3",
                kind: ParamKind::Bool,
                default: "true",
                meaning: "NextSeg rule (3): retransmit un-SACKed data below the highest SACK even if not yet lost",
            },
            Parameter {
                name: "clear_on_timeout",
                kind: ParamKind::Bool,
                default: "true",
                meaning: "forget SACK information after a retransmission timeout (RFC 2018 §5)",
            },
        ],
    },
];

pub fn names(role: Role) -> impl Iterator<Item = &'static str> {
    ALGORITHMS.iter().filter(move |a| a.role == role).map(|a| a.name)
}

pub fn find(role: Role, name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.role == role && a.name == name)
}

/// Builds a congestion control; `params` must have been checked against its table.
pub fn congestion_control(name: &str, _params: &Params) -> Option<Box<dyn CongestionControl>> {
    match name {
        "reno" => Some(Box::new(RenoCc)),
        _ => None,
    }
}

/// Builds a loss recovery; `params` must have been checked against its table.
pub fn loss_recovery(name: &str, params: &Params) -> Option<Box<dyn LossRecovery>> {
    match name {
        "tahoe" => Some(Box::new(Tahoe::default())),
        "reno" => Some(Box::new(Reno::default())),
        "newreno" => {
            let full_ack = match text_param(params, "full_ack", "flight") {
                "ssthresh" => FullAckWindow::Ssthresh,
                _ => FullAckWindow::FlightPlusOne,
            };
            Some(Box::new(NewReno::with_full_ack(full_ack)))
        }
        "sack" => {
            let mut sack = Sack::default();
            sack.use_rule3 = bool_param(params, "rule3", true);
            sack.clear_on_timeout = bool_param(params, "clear_on_timeout", true);
            Some(Box::new(sack))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_algorithm_can_be_built() {
        let none = Params::new();
        for a in ALGORITHMS {
            let built = match a.role {
                Role::CongestionControl => congestion_control(a.name, &none).map(|c| c.name()),
                Role::LossRecovery => loss_recovery(a.name, &none).map(|r| r.name()),
            };
            assert_eq!(built, Some(a.name), "{}", a.name);
        }
    }

    #[test]
    fn defaults_are_valid_values_of_their_kind() {
        for a in ALGORITHMS {
            for p in a.parameters {
                let ok = match p.kind {
                    ParamKind::Bool => p.default == "true" || p.default == "false",
                    ParamKind::Number { min, max } => {
                        p.default.parse::<f64>().is_ok_and(|v| (min..=max).contains(&v))
                    }
                    ParamKind::Choice(words) => words.contains(&p.default),
                };
                assert!(ok, "{}.{}", a.name, p.name);
            }
        }
    }
}
