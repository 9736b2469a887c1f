//! The controller registry: every name a spec may start with, in one table.
//!
//! The first entry of each configuration type is the family's own name; later entries of the
//! same type are aliases with other defaults (`bbr-wifi` = `bbr:wifi=true`, `bbrp` =
//! `bbr:probe_gain=1.5`). A new controller is its own folder (its config, with its keys and
//! its `impl ControllerSpec`, and its `impl Controller`) plus one row here; a new knob touches
//! only its controller's file. Everything that runs every controller (help texts, the C ABI,
//! the tests) reads this table; nothing else lists controllers.

use super::{Built, CcConfig, CcParams, aimd, bbr, bbr_cd, bbr3, cbr, cctcp, cubic, fixed, icp, sirc};

/// The receivers' default controller: what `CcConfig::default()`, `rdtp fetch` without
/// `--cc`, a scenario or testbed flow without `cc` and the C ABI with a null spec run.
/// docs/CONTROLLER.md says why it is this one and where it is not yet within its goals
/// (before it, `bbr`).
pub const DEFAULT: &str = "bbr3-rdtp";

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
        about: "receiver-based BBR v1, a port of Linux tcp_bbr.c (Liu et al. §3.5)",
        base: || CcConfig::new(bbr::BbrConfig::default()),
    },
    Entry {
        name: "bbr-wifi",
        about: "bbr + the WiFi optimisations of Liu et al. §4.2–4.3",
        base: || CcConfig::new(bbr::BbrConfig::wifi()),
    },
    Entry {
        name: "bbrp",
        about: "BBRp (Liu et al. ref. [39], §5.3): ProbeBW probes at 1.5 (bbrp_pace 6; probe_gain=2 is 8)",
        base: || CcConfig::new(bbr::BbrConfig::bbrp(1.5)),
    },
    Entry {
        name: "bbr3",
        about: "receiver-based BBRv3 after draft-ietf-ccwg-bbr-06 (inflight_hi/lo, 2 % loss threshold, ProbeBW DOWN/CRUISE/REFILL/UP)",
        base: || CcConfig::new(bbr3::Bbr3Config::default()),
    },
    Entry {
        name: "bbr3-rdtp",
        about: "the default: bbr3 with rdtp's changes (docs/CONTROLLER.md): random loss below the path's base rate is not \
                congestion, a standing queue is unless it does not drain under the cuts, WiFi aggregation is not a queue, \
                ProbeRTT only when no RTT sample confirms the minimum, informed start",
        base: || CcConfig::new(bbr3::Bbr3Config::rdtp()),
    },
    Entry {
        name: "aimd",
        about: "ndnget's AIMD pipeline (slow start, +1/cwnd, ×β on loss, one decrease per window), unpaced",
        base: || CcConfig::new(aimd::AimdConfig::default()),
    },
    Entry { name: "fixed", about: "a constant window, unpaced", base: || CcConfig::new(fixed::FixedConfig::default()) },
    Entry {
        name: "bbr-orig",
        about: "the original BBR as Hu et al. ran it in NDN (§IV-A): bbr with an initial window of 1",
        base: || CcConfig::new(bbr::BbrConfig::orig()),
    },
    Entry {
        name: "bbr-cd",
        about: "BBR-CD (Hu et al. §III): average-RTT BDP over 8 RTTs, RTprop + 10·δ loss detector, \
                sample-count ProbeRTT, re-requests after new requests",
        base: || CcConfig::new(bbr_cd::BbrCdConfig::default()),
    },
    Entry {
        name: "sirc",
        about: "SIRC as Hu et al. describes it (§IV-A, ref. [5]): AIMD for 10 inter-data gaps, then paced by the gap",
        base: || CcConfig::new(sirc::SircConfig::default()),
    },
    Entry {
        name: "cubic",
        about: "ndnget's CUBIC pipeline (β 0.7, C 0.4, fast convergence, one decrease per window, per-unit RTO timers)",
        base: || CcConfig::new(cubic::CubicConfig::default()),
    },
    Entry {
        name: "cctcp",
        about: "CCTCP (Saino et al.): anticipated interests, a window and an RTO per expected source, virtual loss",
        base: || CcConfig::new(cctcp::CctcpConfig::default()),
    },
    Entry {
        name: "cctcp-single",
        about: "CCTCP without anticipated interests (Saino et al. §III): one window and one RTO per flow",
        base: || CcConfig::new(cctcp::CctcpConfig::single()),
    },
    Entry {
        name: "icp",
        about: "ICP (Carofiglio et al., as Saino et al. §III configures it): AIMD, one timer from all RTT samples",
        base: || CcConfig::new(icp::IcpConfig::default()),
    },
    Entry {
        name: "cbr",
        about: "a constant request rate whatever the losses (open loop), a baseline",
        base: || CcConfig::new(cbr::CbrConfig::default()),
    },
];

/// The names of [`CONTROLLERS`], in its order ([`CcConfig::NAMES`]).
pub(super) const NAMES: [&str; CONTROLLERS.len()] = {
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
    CONTROLLERS.iter().find(|e| (e.base)().same_family(cc)).expect("every configuration in use has an entry")
}

impl Entry {
    /// The entry's controller, built with its base configuration (to ask it about itself).
    fn built(&self) -> Built {
        (self.base)().build(CcParams { unit: crate::wire::DEFAULT_UNIT, max_aggregation: 64, seed: 0 })
    }

    /// The name of the loss detector the entry's controller uses with its base configuration
    /// (`standard` for the receiver's default; see [`Built`]).
    pub fn loss_detector(&self) -> &'static str {
        self.built().loss_detector_name()
    }

    /// Whether the entry's controller is its own loss detector ([`Built::Own`]).
    pub fn owns_loss_detection(&self) -> bool {
        self.built().owns_loss_detection()
    }

    /// Whether the entry's controller lists anticipated interests in its requests.
    pub fn anticipates(&self) -> bool {
        self.built().controller().anticipation() > 0
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
            assert_eq!(CcConfig::NAMES[i], e.name);
            // An alias follows its family's entry.
            let fam = family(&(e.base)());
            assert!(CONTROLLERS[..=i].iter().any(|o| o.name == fam.name), "{} before its family", e.name);
            // The built controller reports the entry's name.
            assert_eq!(e.built().controller().name(), e.name);
        }
        assert_eq!(CcConfig::default().name(), DEFAULT);
        assert_eq!(CcConfig::default(), DEFAULT.parse().unwrap());
        // Only a controller listing anticipated interests gets annotated Data, and it must leave
        // room for them.
        for e in CONTROLLERS {
            let room = (e.base)().data_options_room();
            assert_eq!(room > 0, e.anticipates(), "{}", e.name);
            assert!(room == 0 || room == crate::wire::annotation::ANNOTATION_ROOM, "{}", e.name);
        }
    }
}
