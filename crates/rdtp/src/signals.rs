//! Stop signals, handled in one place for every rdtp program (the UDP and TCP servers here,
//! the testbed too): `signal-hook` raises a flag, and [`Blocked`] keeps the signals blocked
//! in the serving thread except inside its wait (`ppoll` with [`Blocked::wait_mask`]), so a
//! signal that arrives while the thread is busy interrupts the next wait at once instead of
//! being missed until a timeout.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use nix::sys::signal::Signal;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};

/// SIGINT and SIGTERM: what stops a server.
pub const STOP: [Signal; 2] = [Signal::SIGINT, Signal::SIGTERM];

/// A flag that any of some signals raises (the handlers stay installed for the process).
#[derive(Clone, Debug)]
pub struct Flag(Arc<AtomicBool>);

impl Flag {
    /// Install handlers that raise the returned flag on each of `signals`.
    pub fn on(signals: &[Signal]) -> io::Result<Flag> {
        let flag = Arc::new(AtomicBool::new(false));
        for s in signals {
            signal_hook::flag::register(*s as i32, flag.clone())?;
        }
        Ok(Flag(flag))
    }

    /// Whether one of the signals arrived.
    pub fn raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// `signals` blocked in the calling thread until dropped (then the previous mask returns).
#[derive(Debug)]
pub struct Blocked {
    old: SigSet,
    during_wait: SigSet,
}

impl Blocked {
    /// Block `signals` in this thread.
    pub fn new(signals: &[Signal]) -> io::Result<Blocked> {
        let mut set = SigSet::empty();
        for s in signals {
            set.add(*s);
        }
        let mut old = SigSet::empty();
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old)).map_err(io::Error::from)?;
        let mut during_wait = old;
        for s in signals {
            during_wait.remove(*s);
        }
        Ok(Blocked { old, during_wait })
    }

    /// The mask to wait with (`ppoll`): the previous one, so the signals interrupt the wait.
    pub fn wait_mask(&self) -> SigSet {
        self.during_wait
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.old), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_signal_raises_the_flag_once_unblocked() {
        // SIGUSR2: nothing else in the test binary uses it.
        let flag = Flag::on(&[Signal::SIGUSR2]).unwrap();
        assert!(!flag.raised());
        {
            let blocked = Blocked::new(&[Signal::SIGUSR2]).unwrap();
            assert!(!blocked.wait_mask().contains(Signal::SIGUSR2));
            nix::sys::signal::raise(Signal::SIGUSR2).unwrap();
            assert!(!flag.raised(), "delivered while blocked");
        }
        assert!(flag.raised());
    }
}
