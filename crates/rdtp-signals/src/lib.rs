//! # rdtp-signals — stop signals, handled in one place for every rdtp program
//!
//! The runtime's UDP and TCP servers, router and `rdtp fetch` use it as `rdtp::signals`; the
//! testbed, which drives `rdtp` as a process, uses it directly and so does not link the
//! runtime. It holds signal handling only. `signal-hook` raises a flag, and [`Blocked`] keeps
//! the signals blocked in the working thread except inside its wait (`ppoll` with
//! [`Blocked::wait_mask`]), so a signal that arrives while the thread is busy interrupts the
//! next wait at once instead of being missed until a timeout.
//!
//! A thread so busy that it never waits (a server under a flood of requests) would never
//! unblock them: it calls [`Blocked::deliver_pending`] on each turn of its loop (one
//! `sigpending` call), which lets a pending signal's handler run there and then.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use nix::sys::signal::Signal;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};

/// SIGINT and SIGTERM: what stops a server.
pub const STOP: [Signal; 2] = [Signal::SIGINT, Signal::SIGTERM];

/// A flag that any of some signals raises (the handlers stay installed for the process). It
/// remembers which signal came last.
#[derive(Clone, Debug)]
pub struct Flag(Arc<AtomicUsize>);

impl Flag {
    /// Install handlers that raise the returned flag on each of `signals`.
    pub fn on(signals: &[Signal]) -> io::Result<Flag> {
        let flag = Arc::new(AtomicUsize::new(0));
        for s in signals {
            // Signal numbers are positive: 0 means "not raised".
            signal_hook::flag::register_usize(*s as i32, flag.clone(), *s as usize)?;
        }
        Ok(Flag(flag))
    }

    /// Whether one of the signals arrived.
    pub fn raised(&self) -> bool {
        self.0.load(Ordering::SeqCst) != 0
    }

    /// The signal that raised the flag (the last one, if several came).
    pub fn signal(&self) -> Option<Signal> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            n => Signal::try_from(i32::try_from(n).ok()?).ok(),
        }
    }

    /// Whether one of the signals arrived since the last call (for signals that ask for
    /// something each time, as SIGUSR1 asks for a report).
    pub fn take(&self) -> bool {
        self.0.swap(0, Ordering::SeqCst) != 0
    }
}

/// `signals` blocked in the calling thread until dropped (then the previous mask returns).
#[derive(Debug)]
pub struct Blocked {
    old: SigSet,
    during_wait: SigSet,
    set: SigSet,
}

impl Blocked {
    /// Block `signals` in this thread. Threads started afterwards from this one inherit the
    /// mask: a thread that must see the signals makes a `Blocked` of its own and waits with
    /// its [`Blocked::wait_mask`].
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
        Ok(Blocked { old, during_wait, set })
    }

    /// The mask to wait with (`ppoll`): the previous one, so the signals interrupt the wait.
    pub fn wait_mask(&self) -> SigSet {
        self.during_wait
    }

    /// Run the handlers of the blocked signals that are pending (for this thread or the
    /// process), by unblocking them for a moment. For loops that may go long without
    /// waiting: one `sigpending` call when nothing is pending.
    pub fn deliver_pending(&self) {
        let mut pending = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigpending fills the set it is given; it is read only if that succeeded.
        let pending = unsafe {
            if libc::sigpending(pending.as_mut_ptr()) != 0 {
                return;
            }
            SigSet::from_sigset_t_unchecked(pending.assume_init())
        };
        if !self.set.iter().any(|s| pending.contains(s)) {
            return;
        }
        // Pending signals are delivered as soon as they are unblocked, before the call returns.
        let _ = pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&self.set), None);
        let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&self.set), None);
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
        assert_eq!(flag.signal(), Some(Signal::SIGUSR2));
        assert!(flag.take() && !flag.raised() && flag.signal().is_none());
    }

    /// A thread that never waits still sees the signal once it asks for pending ones.
    #[test]
    fn deliver_pending_runs_the_handler_of_a_blocked_signal() {
        // SIGWINCH: harmless if it ever escaped, and unused elsewhere in the tests.
        let flag = Flag::on(&[Signal::SIGWINCH]).unwrap();
        std::thread::spawn(move || {
            let blocked = Blocked::new(&[Signal::SIGWINCH]).unwrap();
            blocked.deliver_pending();
            assert!(!flag.raised(), "nothing was pending");
            // `raise` directs it at this thread, so no other thread of the test binary takes it.
            nix::sys::signal::raise(Signal::SIGWINCH).unwrap();
            assert!(!flag.raised(), "delivered while blocked");
            blocked.deliver_pending();
            assert_eq!(flag.signal(), Some(Signal::SIGWINCH), "pending signal not delivered");
            drop(blocked);
        })
        .join()
        .unwrap();
    }
}
