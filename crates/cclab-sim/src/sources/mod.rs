//! Traffic sources: what the application offers (`app = ...` on a flow group).
//! One descriptor per file; a source states which protocol it runs over and
//! turns its checked parameters into an [`AppSpec`], which the builder turns
//! into endpoints (a bulk or finite TCP transfer, a CBR UDP source) or into a
//! host agent that opens connections during the run (transfer arrivals).

cclab_wire::algorithms! {
    /// The traffic sources a flow group can name (`app = { kind = NAME }`).
    pub const SOURCES: SourceDescriptor = [bulk, transfer, arrivals, web, cbr];
}
pub mod agent;

use cclab_wire::{Descriptor, ParamError, Params, SizeDistribution, Time};
use serde::{Serialize, Serializer};

/// What the application of one flow instance does.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppSpec {
    /// An infinite backlog.
    Bulk,
    /// One transfer of this many bytes.
    Transfer { size: u64 },
    /// Transfers arriving as a Poisson process, sizes drawn from a distribution.
    Arrivals { rate: f64, size: SizeDistribution },
    /// Web sessions of pages of objects (ns-2's WebTraf).
    Web(web::WebSpec),
    /// Constant bit rate, optionally in on/off periods.
    Cbr {
        rate: u64,
        size: u64,
        #[serde(serialize_with = "optional_seconds")]
        on: Option<Time>,
        #[serde(serialize_with = "optional_seconds")]
        off: Option<Time>,
    },
}

impl AppSpec {
    /// The source's name, as `app = { kind = ... }` writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            AppSpec::Bulk => bulk::DESCRIPTOR.name,
            AppSpec::Transfer { .. } => transfer::DESCRIPTOR.name,
            AppSpec::Arrivals { .. } => arrivals::DESCRIPTOR.name,
            AppSpec::Cbr { .. } => cbr::DESCRIPTOR.name,
            AppSpec::Web(_) => web::DESCRIPTOR.name,
        }
    }

    /// Whether the source opens connections during the run (a host agent):
    /// it has no long-lived connection to observe or trace.
    pub fn opens_connections(&self) -> bool {
        matches!(self, AppSpec::Arrivals { .. } | AppSpec::Web(_))
    }

    /// Transfers the source opens per second of the run, on average (per instance).
    pub fn transfers_per_second(&self) -> f64 {
        match self {
            AppSpec::Arrivals { rate, .. } => *rate,
            AppSpec::Web(w) => w.sessions * w.objects_per_session(),
            _ => 0.0,
        }
    }
}

pub(crate) fn optional_seconds<S: Serializer>(t: &Option<Time>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_some(&cclab_wire::time::to_secs_f64(*t)),
        None => s.serialize_none(),
    }
}

#[derive(Clone, Copy, Debug)]
pub struct SourceBuilder {
    pub build: fn(&Params) -> Result<AppSpec, ParamError>,
    /// The protocols this source runs over.
    pub protocols: &'static [&'static str],
}

impl SourceBuilder {
    pub fn runs_over(&self, protocol: &str) -> bool {
        self.protocols.contains(&protocol)
    }
}

pub type SourceDescriptor = Descriptor<SourceBuilder>;

pub fn find(name: &str) -> Option<&'static SourceDescriptor> {
    SOURCES.iter().find(|d| d.name == name)
}
