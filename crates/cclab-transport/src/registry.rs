//! The algorithms a scenario can name, with their parameters and sources.
//! Scenario validation, `cclab algorithms` and the factories below read this one table.

use crate::cc::{reno::Reno as RenoCc, CongestionControl};
use crate::tcp::recovery::{newreno::NewReno, reno::Reno, sack::Sack, tahoe::Tahoe, LossRecovery};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    CongestionControl,
    LossRecovery,
}

#[derive(Clone, Copy, Debug)]
pub struct Parameter {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
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
        source: "RFC 6582 §3.2 (full-ACK window option 1, Impatient timer)",
        parameters: &[],
    },
    Algorithm {
        name: "sack",
        role: Role::LossRecovery,
        summary: "conservative SACK recovery: scoreboard, IsLost, pipe, NextSeg rules 1-4 with rescue retransmission",
        source: "RFC 6675 §4-5; SACK option RFC 2018",
        parameters: &[],
    },
];

pub fn names(role: Role) -> impl Iterator<Item = &'static str> {
    ALGORITHMS.iter().filter(move |a| a.role == role).map(|a| a.name)
}

pub fn congestion_control(name: &str) -> Option<Box<dyn CongestionControl>> {
    match name {
        "reno" => Some(Box::new(RenoCc)),
        _ => None,
    }
}

pub fn loss_recovery(name: &str) -> Option<Box<dyn LossRecovery>> {
    match name {
        "tahoe" => Some(Box::new(Tahoe::default())),
        "reno" => Some(Box::new(Reno::default())),
        "newreno" => Some(Box::new(NewReno::default())),
        "sack" => Some(Box::new(Sack::default())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_algorithm_can_be_built() {
        for a in ALGORITHMS {
            let built = match a.role {
                Role::CongestionControl => congestion_control(a.name).map(|c| c.name()),
                Role::LossRecovery => loss_recovery(a.name).map(|r| r.name()),
            };
            assert_eq!(built, Some(a.name), "{}", a.name);
        }
    }
}
