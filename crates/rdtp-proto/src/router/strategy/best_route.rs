//! `best-route`: every unit goes to the first next hop of the matching route that is not
//! where the request came from (one not presumed dead if there is one). With one next hop
//! per route, rdtp's forwarding before strategies existed. NFD's `best-route` picks the
//! lowest-cost next hop the same way (`fw/best-route-strategy.cpp`).

use std::net::SocketAddr;

use super::{Candidates, RetxSuppression, Strategy, StrategyParams};

pub(super) const ABOUT: &str = "every unit to the route's first next hop (the default)";

pub(super) fn build(p: &StrategyParams) -> Box<dyn Strategy> {
    Box::new(BestRoute { retx: p.retx })
}

#[derive(Debug)]
struct BestRoute {
    retx: RetxSuppression,
}

impl Strategy for BestRoute {
    fn name(&self) -> &'static str {
        "best-route"
    }

    fn after_receive_request(&mut self, c: &Candidates<'_>, out: &mut Vec<SocketAddr>) {
        out.extend(c.first_usable());
    }

    fn retx(&self) -> RetxSuppression {
        self.retx
    }
}
