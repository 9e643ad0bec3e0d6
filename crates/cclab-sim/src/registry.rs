//! Every algorithm a scenario can name, whichever crate it lives in: the list
//! `cclab algorithms` prints and the descriptor test walks.

use crate::{protocols, sources};
use cclab_core::queue::QUEUE_DISCIPLINES;
use cclab_transport::registry as transport;
use cclab_wire::{Descriptor, Info};

pub fn all() -> Vec<Info> {
    let mut infos: Vec<Info> = protocols::PROTOCOLS.iter().map(Descriptor::info).collect();
    infos.extend(transport::infos());
    infos.extend(QUEUE_DISCIPLINES.iter().map(Descriptor::info));
    infos.extend(sources::SOURCES.iter().map(Descriptor::info));
    infos
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::{ParamDefault, Role};

    /// Every descriptor cites a source, has a one-line summary, and every
    /// default parses and lies inside its own range.
    #[test]
    fn every_descriptor_cites_its_source_and_has_defaults_inside_their_ranges() {
        let all = all();
        let roles = [
            Role::Protocol,
            Role::CongestionControl,
            Role::LossRecovery,
            Role::Pacing,
            Role::QueueDiscipline,
            Role::TrafficSource,
            Role::SendBuffer,
        ];
        for role in roles {
            assert!(all.iter().any(|i| i.role == role), "no algorithm for {role:?}");
        }
        let mut parameters = 0;
        for info in &all {
            assert!(info.source.len() > 5, "{}: no source citation", info.name);
            assert!(!info.summary.is_empty() && !info.summary.contains('\n'), "{}: summary", info.name);
            for p in info.parameters {
                parameters += 1;
                assert!(!p.meaning.is_empty(), "{}.{}: no meaning", info.name, p.name);
                if p.ty.has_range() {
                    assert!(p.min <= p.max, "{}.{}: empty range", info.name, p.name);
                }
                match (p.default, p.default_value()) {
                    (ParamDefault::Value(text), Some(Err(e))) => {
                        panic!("{}.{}: default {text:?} is not allowed: {e}", info.name, p.name)
                    }
                    (ParamDefault::Value(_), Some(Ok(_))) => {}
                    (ParamDefault::Required | ParamDefault::Absent, None) => {}
                    (d, v) => panic!("{}.{}: default {d:?} gave {v:?}", info.name, p.name),
                }
            }
        }
        assert!(parameters >= 8, "walked {parameters} parameters");
    }

    #[test]
    fn only_traffic_sources_and_step_marking_have_required_parameters() {
        // A source's rate or size, and the step queue's K, which must follow
        // the link's bandwidth-delay product (RFC 8257 §3.1): no default fits.
        for info in all() {
            for p in info.parameters {
                if p.default == ParamDefault::Required {
                    let allowed =
                        info.role == Role::TrafficSource || (info.name, p.name) == ("step", "threshold");
                    assert!(allowed, "{}.{} is required", info.name, p.name);
                }
            }
        }
    }
}
