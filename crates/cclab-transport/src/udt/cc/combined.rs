//! Both of the seed paper's changes to UDT together (Park et al. 2011, §IV,
//! Fig. 13): the NAK decrease by RTT band ([`super::rtt_banded`]) and the
//! congestion-prediction flow window ([`super::prediction`]), as options of
//! the native algorithm ([`super::daimd`]).

use super::daimd::{self, Decrease, Window};
use super::UdtCcDescriptor;
use cclab_wire::{Descriptor, Role};

pub const DESCRIPTOR: UdtCcDescriptor = Descriptor {
    name: "udt_combined",
    role: Role::CongestionControl,
    summary: "UDT DAIMD with both of the seed's changes: RTT-banded NAK decrease and congestion prediction",
    source: "Park et al. 2011 (seed 002) §III, Fig. 6 and 7, §IV Fig. 13",
    parameters: &daimd::parameters(Decrease::RttBanded, Window::Prediction),
    metrics: daimd::PREDICTION_METRICS,
    build: daimd::build,
};
