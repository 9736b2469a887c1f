//! The controller registry: every name a spec may start with, in one table, and what
//! [`CcConfig`] does per controller (its reported name, its keys, building it).
//!
//! The first entry of each configuration type is the family's own name; later entries of the
//! same type are aliases with other defaults (`bbr-wifi` = `bbr:wifi=true`, `bbrp` =
//! `bbr:probe_gain=1.5`). A new controller adds a `CcConfig` variant, one row here and the
//! three `match` arms below; a new knob touches only its controller's file.

use super::spec::Knobs;
use super::{CcConfig, CcParams, Controller, aimd, bbr, bbr_cd, bbr3, cctcp, cubic, fixed, icp, sirc};

/// A name specs accept.
pub struct Entry {
    pub name: &'static str,
    /// One line for the help text.
    pub about: &'static str,
    /// The configuration the name stands for; a spec's keys are applied on top of it.
    pub base: fn() -> CcConfig,
}

/// Every controller name (`--cc`, `RdtpReceiverConfig.cc`, scenario and testbed `cc`).
pub const CONTROLLERS: &[Entry] = &[
    Entry {
        name: "bbr",
        about: "receiver-based BBR v1, a port of Linux tcp_bbr.c (seed 000 §3.5)",
        base: || CcConfig::Bbr(bbr::BbrConfig::default()),
    },
    Entry {
        name: "bbr-wifi",
        about: "bbr + the WiFi optimisations of seed 000 §4.2–4.3",
        base: || CcConfig::Bbr(bbr::BbrConfig::wifi()),
    },
    Entry {
        name: "bbrp",
        about: "BBRp (seed 000 ref. [39], §5.3): ProbeBW probes at 1.5 (bbrp_pace 6; probe_gain=2 is 8)",
        base: || CcConfig::Bbr(bbr::BbrConfig::bbrp(1.5)),
    },
    Entry {
        name: "bbr3",
        about: "receiver-based BBRv3 after draft-ietf-ccwg-bbr-06 (inflight_hi/lo, 2 % loss threshold, ProbeBW DOWN/CRUISE/REFILL/UP)",
        base: || CcConfig::Bbr3(bbr3::Bbr3Config::default()),
    },
    Entry {
        name: "aimd",
        about: "ndnget's AIMD pipeline (slow start, +1/cwnd, ×β on loss, one decrease per window), unpaced",
        base: || CcConfig::Aimd(aimd::AimdConfig::default()),
    },
    Entry {
        name: "fixed",
        about: "a constant window, unpaced",
        base: || CcConfig::Fixed(fixed::FixedConfig::default()),
    },
    Entry {
        name: "bbr-orig",
        about: "the original BBR as seed 001 ran it in NDN (§IV-A): bbr with an initial window of 1",
        base: || CcConfig::Bbr(bbr::BbrConfig::orig()),
    },
    Entry {
        name: "bbr-cd",
        about: "BBR-CD (seed 001 §III): average-RTT BDP over 8 RTTs, RTprop + 10·δ loss detector, \
                sample-count ProbeRTT, re-requests after new requests",
        base: || CcConfig::BbrCd(bbr_cd::BbrCdConfig::default()),
    },
    Entry {
        name: "sirc",
        about: "SIRC as seed 001 describes it (§IV-A, ref. [5]): AIMD for 10 inter-data gaps, then paced by the gap",
        base: || CcConfig::Sirc(sirc::SircConfig::default()),
    },
    Entry {
        name: "cubic",
        about: "ndnget's CUBIC pipeline (β 0.7, C 0.4, fast convergence, one decrease per window, per-unit RTO timers)",
        base: || CcConfig::Cubic(cubic::CubicConfig::default()),
    },
    Entry {
        name: "cctcp",
        about: "CCTCP (seed 003): anticipated interests, a window and an RTO per expected source, virtual loss",
        base: || CcConfig::Cctcp(cctcp::CctcpConfig::default()),
    },
    Entry {
        name: "cctcp-single",
        about: "CCTCP without anticipated interests (seed 003 §III): one window and one RTO per flow",
        base: || CcConfig::Cctcp(cctcp::CctcpConfig::single()),
    },
    Entry {
        name: "icp",
        about: "ICP (Carofiglio et al., as seed 003 §III configures it): AIMD, one timer from all RTT samples",
        base: || CcConfig::Icp(icp::IcpConfig::default()),
    },
];

const NAME_LIST: [&str; CONTROLLERS.len()] = {
    let mut names = [""; CONTROLLERS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = CONTROLLERS[i].name;
        i += 1;
    }
    names
};

/// The registry entry called `name`.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    CONTROLLERS.iter().find(|e| e.name == name)
}

/// The family entry of a configuration: the first entry of its type.
pub fn family(cc: &CcConfig) -> &'static Entry {
    let kind = core::mem::discriminant(cc);
    CONTROLLERS
        .iter()
        .find(|e| core::mem::discriminant(&(e.base)()) == kind)
        .expect("every CcConfig variant has an entry")
}

impl CcConfig {
    /// The names of the registry, in its order.
    pub const NAMES: &'static [&'static str] = &NAME_LIST;

    /// The configuration a registry name stands for (no keys; see `str::parse` for specs).
    pub fn from_name(name: &str) -> Option<CcConfig> {
        lookup(name).map(|e| (e.base)())
    }

    /// The name the receiver reports for this configuration (`bbr`, `bbr-wifi`, `bbrp`,
    /// `bbr3`, `aimd`, `fixed`); always a registry name.
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::Bbr(c) => c.name(),
            CcConfig::Bbr3(_) => "bbr3",
            CcConfig::Aimd(_) => "aimd",
            CcConfig::Fixed(_) => "fixed",
            CcConfig::BbrCd(_) => "bbr-cd",
            CcConfig::Sirc(_) => "sirc",
            CcConfig::Cubic(_) => "cubic",
            CcConfig::Cctcp(c) => c.name(),
            CcConfig::Icp(_) => "icp",
        }
    }

    /// Bytes of options the Data answering this controller's requests may carry before the
    /// payload (anticipated interests and annotations, seed 003): a unit sized for an MTU
    /// must leave this much room ([`crate::wire::annotation::ANNOTATION_ROOM`], or 0).
    pub fn data_options_room(&self) -> u16 {
        match self {
            CcConfig::Cctcp(c) if c.per_source && c.anticipate > 0 => crate::wire::annotation::ANNOTATION_ROOM,
            _ => 0,
        }
    }

    /// This configuration's keys.
    pub fn knobs(&self) -> &dyn Knobs {
        match self {
            CcConfig::Bbr(c) => c,
            CcConfig::Bbr3(c) => c,
            CcConfig::Aimd(c) => c,
            CcConfig::Fixed(c) => c,
            CcConfig::BbrCd(c) => c,
            CcConfig::Sirc(c) => c,
            CcConfig::Cubic(c) => c,
            CcConfig::Cctcp(c) => c,
            CcConfig::Icp(c) => c,
        }
    }

    pub(crate) fn knobs_mut(&mut self) -> &mut dyn Knobs {
        match self {
            CcConfig::Bbr(c) => c,
            CcConfig::Bbr3(c) => c,
            CcConfig::Aimd(c) => c,
            CcConfig::Fixed(c) => c,
            CcConfig::BbrCd(c) => c,
            CcConfig::Sirc(c) => c,
            CcConfig::Cubic(c) => c,
            CcConfig::Cctcp(c) => c,
            CcConfig::Icp(c) => c,
        }
    }

    /// Build the controller.
    pub fn build(&self, params: CcParams) -> Box<dyn Controller> {
        match self {
            CcConfig::Bbr(c) => Box::new(bbr::Bbr::new(c.clone(), params)),
            CcConfig::Bbr3(c) => Box::new(bbr3::Bbr3::new(c.clone(), params)),
            CcConfig::Aimd(c) => Box::new(aimd::Aimd::new(c.clone(), params)),
            CcConfig::Fixed(c) => Box::new(fixed::Fixed::new(c.clone(), params)),
            CcConfig::BbrCd(c) => Box::new(bbr_cd::BbrCd::new(c.clone(), params)),
            CcConfig::Sirc(c) => Box::new(sirc::Sirc::new(c.clone(), params)),
            CcConfig::Cubic(c) => Box::new(cubic::Cubic::new(c.clone(), params)),
            CcConfig::Cctcp(c) => Box::new(cctcp::Cctcp::new(c.clone(), params)),
            CcConfig::Icp(c) => Box::new(icp::Icp::new(c.clone(), params)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_reports_its_own_name_and_names_are_unique() {
        for (i, e) in CONTROLLERS.iter().enumerate() {
            assert_eq!((e.base)().name(), e.name);
            assert!(CONTROLLERS[..i].iter().all(|o| o.name != e.name), "{} twice", e.name);
        }
        assert_eq!(
            CcConfig::NAMES,
            [
                "bbr",
                "bbr-wifi",
                "bbrp",
                "bbr3",
                "aimd",
                "fixed",
                "bbr-orig",
                "bbr-cd",
                "sirc",
                "cubic",
                "cctcp",
                "cctcp-single",
                "icp"
            ]
        );
        // Only a controller listing anticipated interests gets annotated Data.
        let room: Vec<u16> =
            CcConfig::NAMES.iter().map(|n| CcConfig::from_name(n).unwrap().data_options_room()).collect();
        assert_eq!(room, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 342, 0, 0]);
    }
}
