//! The transport algorithms a scenario can name: one descriptor per algorithm
//! file, listed here by role. Adding an algorithm is one new file exporting a
//! descriptor and one line in a list below; the scenario validator, `cclab
//! algorithms` and the simulator's builder read these lists and nothing else.

use crate::buffer::{atbt, fixed, rtba, SendBufferPolicy};
use crate::cc::{self, CongestionControl};
use crate::pacing::{self, Pacer};
use crate::tcp::recovery::{decoupled, newreno, reno, sack, sack1, tahoe, LossRecovery};
use crate::udt::cc::{daimd, prediction, rtt_banded, UdtCcDescriptor, UdtCongestionControl};
use cclab_wire::{Descriptor, Info, ParamError, Params};

/// How to build a congestion control, and whether it paces itself.
#[derive(Clone, Copy, Debug)]
pub struct CcBuilder {
    pub build: fn(&Params) -> Result<Box<dyn CongestionControl>, ParamError>,
    /// The algorithm computes its own sending rate (BBR), so a flow's `pacing`
    /// cannot be set: it would be overridden.
    pub paces_itself: bool,
}

pub type CcDescriptor = Descriptor<CcBuilder>;
/// How to build a loss recovery, and whether it reads SACK blocks.
#[derive(Clone, Copy, Debug)]
pub struct RecoveryBuilder {
    pub build: fn(&Params) -> Result<Box<dyn LossRecovery>, ParamError>,
    /// The recovery reads the scoreboard, so the receiver must send SACK
    /// blocks (RFC 2018); without them it would never see a duplicate ACK.
    pub uses_sack: bool,
}

pub type RecoveryDescriptor = Descriptor<RecoveryBuilder>;
/// `Ok(None)` is "no pacing".
pub type PacingDescriptor = Descriptor<fn(&Params) -> Result<Option<Box<dyn Pacer>>, ParamError>>;
pub type SendBufferDescriptor = Descriptor<fn(&Params) -> Result<Box<dyn SendBufferPolicy>, ParamError>>;

pub const CONGESTION_CONTROLS: &[CcDescriptor] = &[
    cc::reno::DESCRIPTOR,
    cc::highspeed::DESCRIPTOR,
    cc::scalable::DESCRIPTOR,
    cc::bic::DESCRIPTOR,
    cc::cubic::DESCRIPTOR,
    cc::westwood::DESCRIPTOR,
    cc::westwood_plus::DESCRIPTOR,
    cc::decoupled::DESCRIPTOR,
    cc::jersey::DESCRIPTOR,
    cc::bbr::DESCRIPTOR,
    cc::vegas::DESCRIPTOR,
];

/// Congestion controls of `protocol = "udt"` flows (UDT 4's `CCC` contract).
pub const UDT_CONGESTION_CONTROLS: &[UdtCcDescriptor] =
    &[daimd::DESCRIPTOR, rtt_banded::DESCRIPTOR, prediction::DESCRIPTOR, prediction::COMBINED];

pub const LOSS_RECOVERIES: &[RecoveryDescriptor] = &[
    tahoe::DESCRIPTOR,
    reno::DESCRIPTOR,
    newreno::DESCRIPTOR,
    sack::DESCRIPTOR,
    sack1::DESCRIPTOR,
    decoupled::DESCRIPTOR,
];

pub const PACINGS: &[PacingDescriptor] = &[pacing::NONE, pacing::RTT, pacing::LINUX];

/// How a connection sizes its send buffer (`send_buffer.policy`).
pub const SEND_BUFFER_POLICIES: &[SendBufferDescriptor] =
    &[fixed::DESCRIPTOR, atbt::DESCRIPTOR, rtba::DESCRIPTOR];

fn find<B>(list: &'static [Descriptor<B>], name: &str) -> Option<&'static Descriptor<B>> {
    list.iter().find(|d| d.name == name)
}

pub fn congestion_control(name: &str) -> Option<&'static CcDescriptor> {
    find(CONGESTION_CONTROLS, name)
}

pub fn udt_congestion_control(name: &str) -> Option<&'static UdtCcDescriptor> {
    find(UDT_CONGESTION_CONTROLS, name)
}

pub fn loss_recovery(name: &str) -> Option<&'static RecoveryDescriptor> {
    find(LOSS_RECOVERIES, name)
}

pub fn pacing(name: &str) -> Option<&'static PacingDescriptor> {
    find(PACINGS, name)
}

pub fn send_buffer_policy(name: &str) -> Option<&'static SendBufferDescriptor> {
    find(SEND_BUFFER_POLICIES, name)
}

/// Every transport algorithm, by role.
pub fn infos() -> Vec<Info> {
    let mut all: Vec<Info> = CONGESTION_CONTROLS.iter().map(Descriptor::info).collect();
    all.extend(UDT_CONGESTION_CONTROLS.iter().map(Descriptor::info));
    all.extend(LOSS_RECOVERIES.iter().map(Descriptor::info));
    all.extend(PACINGS.iter().map(Descriptor::info));
    all.extend(SEND_BUFFER_POLICIES.iter().map(Descriptor::info));
    all
}

/// Builds algorithms at their defaults (tests, and callers that take every default).
pub mod defaults {
    use super::*;

    fn params<B>(d: &Descriptor<B>) -> Result<Params, ParamError> {
        d.info().defaults()
    }

    pub fn congestion_control(name: &str) -> Result<Box<dyn CongestionControl>, ParamError> {
        let d = super::congestion_control(name).ok_or(unknown(name))?;
        (d.build.build)(&params(d)?)
    }

    pub fn udt_congestion_control(name: &str) -> Result<Box<dyn UdtCongestionControl>, ParamError> {
        let d = super::udt_congestion_control(name).ok_or(unknown(name))?;
        (d.build)(&params(d)?)
    }

    pub fn loss_recovery(name: &str) -> Result<Box<dyn LossRecovery>, ParamError> {
        let d = super::loss_recovery(name).ok_or(unknown(name))?;
        (d.build.build)(&params(d)?)
    }

    pub fn pacing(name: &str) -> Result<Option<Box<dyn Pacer>>, ParamError> {
        let d = super::pacing(name).ok_or(unknown(name))?;
        (d.build)(&params(d)?)
    }

    pub fn send_buffer_policy(name: &str) -> Result<Box<dyn SendBufferPolicy>, ParamError> {
        let d = super::send_buffer_policy(name).ok_or(unknown(name))?;
        (d.build)(&params(d)?)
    }

    fn unknown(name: &str) -> ParamError {
        ParamError { name: name.into(), problem: "is not a registered algorithm" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_algorithm_builds_at_its_defaults_under_its_own_name() {
        for d in CONGESTION_CONTROLS {
            assert_eq!(defaults::congestion_control(d.name).map(|c| c.name()), Ok(d.name));
        }
        for d in LOSS_RECOVERIES {
            assert_eq!(defaults::loss_recovery(d.name).map(|r| r.name()), Ok(d.name));
        }
        for d in PACINGS {
            let name = defaults::pacing(d.name).map(|p| p.map_or("none", |p| p.name()));
            assert_eq!(name, Ok(d.name));
        }
        for d in SEND_BUFFER_POLICIES {
            assert_eq!(defaults::send_buffer_policy(d.name).map(|p| p.name()), Ok(d.name));
        }
    }

    #[test]
    fn names_are_unique_within_a_role() {
        let all = infos();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[..i].iter().any(|b| b.role == a.role && b.name == a.name), "{} twice", a.name);
        }
    }
}
