//! The transport algorithms a scenario can name, by role, and the names a flow
//! gets when it names none. Each role's list is declared beside its trait
//! (`cclab_wire::algorithms!`), where it also declares the algorithm files, so
//! adding an algorithm is one new file and its name in that list; the scenario
//! validator, `cclab algorithms`, the simulator's builder and `cclab send` read
//! the lists through this module and nothing else.

pub use crate::buffer::{SendBufferDescriptor, SEND_BUFFER_POLICIES};
pub use crate::cc::{CcBuilder, CcDescriptor, CONGESTION_CONTROLS};
pub use crate::pacing::{PacingDescriptor, PACINGS};
pub use crate::tcp::recovery::{RecoveryBuilder, RecoveryDescriptor, LOSS_RECOVERIES};
pub use crate::udt::cc::{UdtCcDescriptor, UDT_CONGESTION_CONTROLS};

use crate::buffer::SendBufferPolicy;
use crate::cc::CongestionControl;
use crate::pacing::Pacer;
use crate::tcp::recovery::LossRecovery;
use crate::udt::cc::UdtCongestionControl;
use cclab_wire::{Descriptor, Info, ParamError, Params};

/// A TCP flow's congestion control when it names none (`cc`).
pub const DEFAULT_CONGESTION_CONTROL: &str = "reno";
/// A TCP flow's loss recovery when it names none (`recovery`).
pub const DEFAULT_LOSS_RECOVERY: &str = "newreno";
/// A TCP flow's pacing when it names none (`pacing`): no pacing.
pub const DEFAULT_PACING: &str = "none";
/// A UDT flow's congestion control when it names none: UDT 4's native DAIMD.
pub const DEFAULT_UDT_CONGESTION_CONTROL: &str = "udt";

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
    fn the_defaults_are_registered_under_their_roles() {
        assert!(congestion_control(DEFAULT_CONGESTION_CONTROL).is_some());
        assert!(loss_recovery(DEFAULT_LOSS_RECOVERY).is_some());
        assert!(pacing(DEFAULT_PACING).is_some());
        assert!(udt_congestion_control(DEFAULT_UDT_CONGESTION_CONTROL).is_some());
    }

    #[test]
    fn names_are_unique_within_a_role() {
        let all = infos();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[..i].iter().any(|b| b.role == a.role && b.name == a.name), "{} twice", a.name);
        }
    }
}
